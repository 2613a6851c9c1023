#!/usr/bin/python3
"""Builds an nvptx offload program for tests (fakecuda, or a real GPU).

  cuda_image.py CUDA_BIN OUT -- CC ARGS...

Runs the compiler command with CUDA_BIN (ptxas, nvlink) first on PATH, then
rewrites OUT's embedded device images for LLVM 19. CUDA 12.8+'s nvlink writes
cubins in ELF ABI v2 (EI_OSABI 0x41), whose e_flags keep the SM in bits
8-15; LLVM 19's plugin reads e_flags in the v1 layout (SM in bits 0-7, 64-bit
addressing 0x400) and refuses the image ("No images found compatible").
Only e_flags changes: the same SM, written the v1 way. Images already in
the v1 layout are left as they are.
"""
import os
import subprocess
import sys

EM_CUDA = 190
ELFOSABI_CUDA_V2 = 0x41
EF_CUDA_TEXMODE_UNIFIED = 0x100
EF_CUDA_64BIT_ADDRESS = 0x400


def v1_flags(v2):
    sm = (v2 >> 8) & 0xff
    return sm | EF_CUDA_TEXMODE_UNIFIED | EF_CUDA_64BIT_ADDRESS | (sm << 16)


def patch(path):
    data = bytearray(open(path, "rb").read())
    found = patched = 0
    at = data.find(b"\x7fELF", 1)
    while at != -1:
        head = data[at:at + 64]
        if (len(head) == 64 and head[4] == 2 and head[5] == 1
                and int.from_bytes(head[18:20], "little") == EM_CUDA):
            found += 1
            if head[7] == ELFOSABI_CUDA_V2:
                flags = int.from_bytes(head[48:52], "little")
                data[at + 48:at + 52] = v1_flags(flags).to_bytes(4, "little")
                patched += 1
        at = data.find(b"\x7fELF", at + 1)
    if not found:
        sys.exit("cuda_image.py: %s holds no CUDA device image" % path)
    if patched:
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.chmod(tmp, os.stat(path).st_mode)
        os.replace(tmp, path)


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit("usage: cuda_image.py CUDA_BIN OUT -- CC ARGS...")
    cuda_bin, out, cmd = sys.argv[1], sys.argv[2], sys.argv[4:]
    env = dict(os.environ)
    env["PATH"] = cuda_bin + os.pathsep + env.get("PATH", "")
    rc = subprocess.call(cmd, env=env)
    if rc:
        sys.exit(rc)
    patch(out)


if __name__ == "__main__":
    main()
