"""Loads a library model whose op starts the runtime's worker threads,
calls it, unloads it and closes the library, many times: the threads, file
descriptors and mappings of this process must come back to where they were.
Prints the counts."""
import ctypes
import os
import sys

import numpy as np

library = sys.argv[1]
cycles = int(sys.argv[2])
libc = ctypes.CDLL(None)
libc.dlopen.restype = ctypes.c_void_p
libc.dlopen.argtypes = [ctypes.c_char_p, ctypes.c_int]
libc.dlclose.argtypes = [ctypes.c_void_p]
libc.dlsym.restype = ctypes.c_void_p
libc.dlsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
RTLD_NOW = 2


def threads():
    return len(os.listdir("/proc/self/task"))


def fds():
    return len(os.listdir("/proc/self/fd"))


def rss_kib():
    # Freed memory glibc keeps in its heaps is not a leak: hand it back first.
    libc.malloc_trim(0)
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def mapped():
    with open("/proc/self/maps") as f:
        return sum(library in line for line in f)


x = np.random.default_rng(0).standard_normal((2048, 1024), dtype=np.float32)
out = np.empty_like(x)
error = ctypes.create_string_buffer(512)
before = (threads(), fds(), mapped())
busy = 0
rss = []  # after each cycle
for cycle in range(cycles):
    handle = libc.dlopen(library.encode(), RTLD_NOW)
    assert handle, "dlopen failed"
    load = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
                            ctypes.c_char_p, ctypes.c_int64)(
        libc.dlsym(handle, b"tandem_model_load"))
    infer = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_char_p, ctypes.c_int64)(
        libc.dlsym(handle, b"tandem_model_infer"))
    unload = ctypes.CFUNCTYPE(None)(libc.dlsym(handle, b"tandem_model_unload"))
    assert load(b"", b"sim", error, len(error)) == 0, error.value
    status = infer((ctypes.c_void_p * 1)(x.ctypes.data),
                   (ctypes.c_void_p * 1)(out.ctypes.data), error, len(error))
    assert status == 0, error.value
    assert np.array_equal(out, np.maximum(x, 0))
    busy = max(busy, threads() - before[0])
    unload()
    assert libc.dlclose(handle) == 0
    rss.append(rss_kib())
after = (threads(), fds(), mapped())
# The first cycles warm the allocator (glibc raises its mmap threshold after
# the first large free). Compare the least resident memory of ten cycles
# just past the middle with that of the last ten: a leak raises even the
# least, a page kept now and then does not.
window = 10
middle = cycles // 2
growth = min(rss[-window:]) - min(rss[middle:middle + window])
print(f"{cycles} load/call/unload/dlclose cycles: up to {busy} worker "
      f"thread(s) while loaded; afterwards threads {after[0] - before[0]:+d}, "
      f"fds {after[1] - before[1]:+d}, mappings of the library {after[2]}")
# Each cycle used to keep ~1 MB (a thread's stack, the mapped library).
per_cycle = growth / (cycles - window - middle)
print(f"resident memory over the second half: {per_cycle:+.1f} KiB per cycle: "
      f"{'flat' if per_cycle < 16 else 'GROWING'}")
