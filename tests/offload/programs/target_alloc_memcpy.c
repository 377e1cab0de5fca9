// Device memory routines: omp_target_alloc/omp_target_free, omp_target_memcpy host->device,
// device->host, with offsets, and device->device (between two different devices whenever there
// are at least two, otherwise within one device), and omp_target_memcpy_rect in both directions.
// Kernels reach the allocations through is_device_ptr.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "self_check.h"

enum { kJobs = 8, kN = 4096, kHops = 12, kRows = 20, kCols = 24 };

static unsigned host_buf[kN];
static int grid[kRows][kCols], grid_back[kRows][kCols];

int main(void) {
  const int ndev = omp_get_num_devices();
  const int count = ndev > 0 ? ndev : 1;
  const int host = omp_get_initial_device();
  fprintf(stderr, "target_alloc_memcpy: %d device(s)\n", ndev);
  const size_t bytes = sizeof(unsigned) * kN;

  // 1. host -> device, kernel, device -> host; the second half travels with byte offsets.
  int before = failures;
  uint64_t h = CHECKSUM_START;
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : host;
    unsigned* d_buf = omp_target_alloc(bytes, dev);
    if (!d_buf) {
      fprintf(stderr, "omp_target_alloc(%zu, %d) failed\n", bytes, dev);
      return 1;
    }
    for (int i = 0; i < kN; ++i) host_buf[i] = (unsigned)(j * 7919 + i);
    const size_t half = bytes / 2;
    int rc = omp_target_memcpy(d_buf, host_buf, half, 0, 0, dev, host);
    rc |= omp_target_memcpy(d_buf, host_buf, half, half, half, dev, host);
    check("roundtrip.rc_to", j, rc, 0);
#pragma omp target device(dev) is_device_ptr(d_buf) firstprivate(j)
    for (int i = 0; i < kN; ++i) d_buf[i] = d_buf[i] * 5u + (unsigned)j;
    for (int i = 0; i < kN; ++i) host_buf[i] = 0;
    rc = omp_target_memcpy(host_buf, d_buf, half, 0, 0, host, dev);
    rc |= omp_target_memcpy(host_buf, d_buf, half, half, half, host, dev);
    check("roundtrip.rc_from", j, rc, 0);
    omp_target_free(d_buf, dev);
    for (int i = 0; i < kN; ++i) {
      check("roundtrip.buf", j * kN + i, host_buf[i], (unsigned)(j * 7919 + i) * 5u + (unsigned)j);
      h = mix(h, host_buf[i]);
    }
  }
  report("roundtrip", h, before);

  // 2. A buffer hopping over the devices: hop k runs on device k % count after a device-to-device
  // copy from the previous device (a copy inside one device when there is only one).
  before = failures;
  unsigned* bufs[2 * 64];
  const int nbufs = count < 64 ? count : 64;
  for (int d = 0; d < nbufs; ++d) {
    const int dev = ndev > 0 ? d : host;
    bufs[2 * d] = omp_target_alloc(bytes, dev);
    bufs[2 * d + 1] = omp_target_alloc(bytes, dev);
    if (!bufs[2 * d] || !bufs[2 * d + 1]) {
      fprintf(stderr, "omp_target_alloc on device %d failed\n", dev);
      return 1;
    }
  }
  for (int i = 0; i < kN; ++i) host_buf[i] = (unsigned)i;
  int cur_d = 0, cur_slot = 0;
  check("hops.rc_in", 0,
        omp_target_memcpy(bufs[0], host_buf, bytes, 0, 0, ndev > 0 ? 0 : host, host), 0);
  for (int k = 0; k < kHops; ++k) {
    const int next_d = k % nbufs;
    const int next_slot = next_d == cur_d ? 1 - cur_slot : 0;
    unsigned* src = bufs[2 * cur_d + cur_slot];
    unsigned* dst = bufs[2 * next_d + next_slot];
    const int src_dev = ndev > 0 ? cur_d : host, dst_dev = ndev > 0 ? next_d : host;
    check("hops.rc_copy", k, omp_target_memcpy(dst, src, bytes, 0, 0, dst_dev, src_dev), 0);
#pragma omp target device(dst_dev) is_device_ptr(dst) firstprivate(k)
    for (int i = 0; i < kN; ++i) dst[i] = dst[i] * 3u + (unsigned)k;
    cur_d = next_d;
    cur_slot = next_slot;
  }
  for (int i = 0; i < kN; ++i) host_buf[i] = 0;
  check("hops.rc_out", 0,
        omp_target_memcpy(host_buf, bufs[2 * cur_d + cur_slot], bytes, 0, 0, host,
                          ndev > 0 ? cur_d : host),
        0);
  for (int d = 0; d < nbufs; ++d) {
    omp_target_free(bufs[2 * d], ndev > 0 ? d : host);
    omp_target_free(bufs[2 * d + 1], ndev > 0 ? d : host);
  }
  h = CHECKSUM_START;
  for (int i = 0; i < kN; ++i) {
    unsigned want = (unsigned)i;
    for (int k = 0; k < kHops; ++k) want = want * 3u + (unsigned)k;
    check("hops.buf", i, host_buf[i], want);
    h = mix(h, host_buf[i]);
  }
  report("hops", h, before);

  // 3. omp_target_memcpy_rect: a 6x10 block at (3,5) of the host grid goes to (0,0) of a device
  // grid, is negated there, and comes back to (3,5) of another host grid.
  before = failures;
  h = CHECKSUM_START;
  for (int d = 0; d < count; ++d) {
    const int dev = ndev > 0 ? d : host;
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < kCols; ++c) {
        grid[r][c] = r * 100 + c + d;
        grid_back[r][c] = -1;
      }
    int* d_grid = omp_target_alloc(sizeof grid, dev);
    if (!d_grid) return 1;
    const size_t volume[2] = {6, 10}, dims[2] = {kRows, kCols};
    const size_t at_host[2] = {3, 5}, at_dev[2] = {0, 0};
    int rc = omp_target_memcpy_rect(d_grid, grid, sizeof(int), 2, volume, at_dev, at_host, dims,
                                    dims, dev, host);
#pragma omp target device(dev) is_device_ptr(d_grid)
    for (int r = 0; r < 6; ++r)
      for (int c = 0; c < 10; ++c) d_grid[r * kCols + c] = -d_grid[r * kCols + c];
    rc |= omp_target_memcpy_rect(grid_back, d_grid, sizeof(int), 2, volume, at_host, at_dev, dims,
                                 dims, host, dev);
    check("rect.rc", d, rc, 0);
    omp_target_free(d_grid, dev);
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < kCols; ++c) {
        const int inside = r >= 3 && r < 9 && c >= 5 && c < 15;
        check("rect.grid", (d * kRows + r) * kCols + c, grid_back[r][c],
              inside ? -(r * 100 + c + d) : -1);
        if (d == 0) h = mix(h, (uint64_t)grid_back[r][c]);
      }
  }
  report("rect", h, before);

  if (failures) {
    fprintf(stderr, "target_alloc_memcpy: %d mismatch(es)\n", failures);
    return 1;
  }
  return 0;
}
