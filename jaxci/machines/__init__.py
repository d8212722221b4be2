"""This machine as asv sees it: registration under a catalogue or local name (with NVML's GPU facts and the
physical core count), and copies of asv.conf.json that send every output elsewhere.

Owns: the asv machine file and asv configuration. May import the runtime (catalogue, nvml) and util; the
catalogue itself stays at jaxci's top level because benchmarks read its memory policies.
"""
