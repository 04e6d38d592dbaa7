#!/usr/bin/env python3
"""Flood an sFlow collector with datagrams naming new QPs (issue 26 item 2).

Each datagram carries SAMPLES flow samples; each sample a RoCEv2 SEND (Ethernet, IPv4,
UDP 4791, BTH) from a random 10.x.y.z host to a random one, with a random destination QP,
so every sample is a new flow. Sends to 127.0.0.1 only.

    python3 bench/sflow-flood.py PORT SECONDS [SAMPLES]
"""
import random
import socket
import struct
import sys
import time


def w(*vals):
    return b"".join(struct.pack(">I", v & 0xFFFFFFFF) for v in vals)


def roce_frame(rng):
    src = bytes([10, rng.randrange(256), rng.randrange(256), rng.randrange(1, 255)])
    dst = bytes([10, rng.randrange(256), rng.randrange(256), rng.randrange(1, 255)])
    bth = bytes([0x04, 0x40, 0xFF, 0xFF, 0]) + rng.randrange(1, 1 << 24).to_bytes(3, "big") + bytes(
        [0]
    ) + rng.randrange(1 << 24).to_bytes(3, "big")
    payload = bytes(64)
    udp_len = 8 + len(bth) + len(payload) + 4
    udp = struct.pack(">HHHH", rng.randrange(49152, 65536), 4791, udp_len, 0)
    total = 20 + udp_len
    ip = bytearray(struct.pack(">BBHHHBBH", 0x45, 26 << 2 | 2, total, 0, 0x4000, 64, 17, 0) + src + dst)
    s = sum(struct.unpack(">10H", bytes(ip)))
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    ip[10:12] = struct.pack(">H", ~s & 0xFFFF)
    eth = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00])
    return eth + bytes(ip) + udp + bth + payload + bytes(4)


def flow_sample(rng, seq):
    hdr = roce_frame(rng)[:128]
    raw = w(1, len(hdr) + 4, 4, len(hdr)) + hdr
    raw += bytes(-len(raw) % 4)
    body = w(seq, 3, 1000, seq * 1000, 0, 3, 0x3FFFFFFF, 1) + w(1, len(raw)) + raw
    return w(1, len(body)) + body


def main():
    port, seconds = int(sys.argv[1]), float(sys.argv[2])
    per = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    rng = random.Random(26)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    end = time.time() + seconds
    seq = sent = 0
    while time.time() < end:
        seq += 1
        samples = b"".join(flow_sample(rng, seq * per + i) for i in range(per))
        d = w(5, 1) + bytes([127, 0, 0, 1]) + w(0, seq, seq, per) + samples
        sock.sendto(d, ("127.0.0.1", port))
        sent += per
        if seq % 64 == 0:
            time.sleep(0.0005)
    print(f"{sent} samples in {seq} datagrams")


if __name__ == "__main__":
    main()
