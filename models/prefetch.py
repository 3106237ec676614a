"""Parameters of a cache's hardware prefetchers (read by kvsim-timing's `mem/prefetch.rs`), a component of the cache
as its replacement policy is. Every prefetcher is off by default: a platform switches on the ones its cache has.

Ivy Bridge's four (Intel's 64 and IA-32 Architectures Optimization Reference Manual, 248966, Sandy Bridge chapter,
"Data Prefetching", which Ivy Bridge keeps), none of which crosses a 4 KB page:
* L1D, DCU (next-line, "streaming") prefetcher: an ascending access to recently loaded data fetches the next line.
  Intel's SDM (vol. 3C, IA32_MISC_ENABLE bit 37, "DCU Prefetcher Disable") says what the access is: "multiple loads
  from the same line done within a time limit". So the model's trigger is a second load in a row to one line at a
  higher offset; the first load of the following line is not one (the time limit is not published).
* L1D, IP-based stride prefetcher: a load instruction seen with a regular stride (forward or backward, up to 2 KB)
  prefetches the current address plus the stride.
* L2, spatial prefetcher: completes every line fetched into the L2 with its pair in the 128-byte-aligned chunk.
* L2, streamer: watches the L1's requests for ascending and descending sequences within a 4 KB page; a detected
  stream prefetches the lines ahead, up to two per L2 lookup and up to 20 lines ahead of the load; it tracks 32
  streams (a forward and a backward one per page).

Software non-temporal prefetches (x86 PREFETCHNTA; the guest's NTL hint before `prefetch.r`, MICA's prefetches) are
not allocated in the L2 (the hierarchy's rule for a non-temporal access) and, by default, are not seen by that
cache's prefetchers (`trained_by_non_temporal`). The manual's Sandy Bridge "Data Prefetching" section says the
spatial prefetcher completes lines fetched into the L2 (an NTA line is not), and lists what the streamer monitors:
L1D requests from loads, stores and the L1D's hardware prefetchers, and code fetches (software prefetches are not
named: for the streamer this is that list read literally, an assumption). The manual's earlier editions say
PREFETCHNTA fills the first-level cache without polluting the second (Pentium M onward), and, for the Intel Core
microarchitecture, that software prefetches can trigger the hardware prefetchers as loads do; switching
`trained_by_non_temporal` on models that reading.
"""

from __future__ import annotations

from .params import Param, SimObject


class Prefetcher(SimObject):
    """The hardware prefetchers of one cache (each off unless switched on)."""

    next_line = Param.Bool(False, "next-line (Intel's DCU) prefetcher: a second load in a row to one line, at a higher "
                           "offset, fetches the line after it (same 4 KB page)")
    ip_stride = Param.Bool(False, "IP-based stride prefetcher: a load PC seen twice with one stride (up to 2 KB, "
                           "either direction) prefetches address + stride x degree (same 4 KB page)")
    ip_stride_entries = Param.Count(64, "load PCs the stride prefetcher tracks (direct-mapped by PC; assumed)",
                                    min=1, max=4096)
    ip_stride_degree = Param.Count(1, "strides ahead the stride prefetcher fetches (Ivy Bridge: one line)", min=1,
                                   max=8)
    streamer = Param.Bool(False, "stream prefetcher: ascending or descending misses within a 4 KB page start a "
                          "stream; each later access in it prefetches the lines ahead, `streamer_degree` per access, "
                          "at most `streamer_distance` lines ahead (Intel's L2 streamer)")
    streamer_streams = Param.Count(32, "streams tracked (Ivy Bridge: 32), LRU", min=1, max=256)
    streamer_degree = Param.Count(2, "lines prefetched per access that advances a stream (Ivy Bridge: up to 2)",
                                  min=1, max=8)
    streamer_distance = Param.Count(20, "farthest a stream runs ahead of its last access, in lines (Ivy Bridge: "
                                    "20)", min=1, max=63)
    adjacent_line = Param.Bool(False, "spatial (adjacent-line) prefetcher: a miss fetches the other line of its "
                               "128-byte-aligned pair")
    max_misses_in_flight = Param.Count(0, "the prefetchers send a line only while fewer than this many of the "
                                       "cache's MSHRs (fill buffers) hold misses in flight, else it is dropped "
                                       "(Intel's manual lists 'not many other load misses are in progress' among the "
                                       "L1D prefetchers' issue conditions; how many is not published: a value here "
                                       "is assumed); 0: whenever an MSHR is free", min=0, max=256)
    hold_during_fence = Param.Bool(False, "these prefetchers send nothing for a load that issues while a fence of "
                                   "the core is in flight (dispatched, not yet committed): Intel's manual lists "
                                   "'no fence is in progress in the pipeline' among the L1D prefetchers' issue "
                                   "conditions (Sandy Bridge's 'Data Prefetch to L1 Data Cache'); off: fences "
                                   "hold nothing back")
    hold_after_stores = Param.Count(0, "these prefetchers send nothing for a load that follows at least this many "
                                    "of the core's stores in a row (no load between): Intel's manual lists 'there "
                                    "is not a continuous stream of stores' among the L1D prefetchers' issue "
                                    "conditions; how many stores make a stream is not published, so a value here "
                                    "is assumed; 0: stores hold nothing back", min=0, max=1024)
    trained_by_page_walks = Param.Bool(True, "these prefetchers see the page walker's reads of page-table entries "
                                       "(which read through the L1D): on, a PTE read trains and triggers them as a "
                                       "load does; off, it is not shown to them (Intel's manual: L1D data "
                                       "prefetching 'is triggered by load operations', and a walk's read is no load "
                                       "operation)")
    trained_by_non_temporal = Param.Bool(False, "these prefetchers see non-temporal accesses (a software NTA "
                                         "prefetch, not allocated in the L2): off, an NTA prefetch neither trains "
                                         "the streamer nor triggers the adjacent-line prefetcher (Intel's manual: "
                                         "they watch loads, stores, hardware prefetches and lines filled into the "
                                         "L2)")
