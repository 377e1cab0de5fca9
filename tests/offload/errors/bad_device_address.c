// omp_target_memcpy from an address device 0 never allocated: the plugin
// must say which address and device, and the call must fail (the program
// then exits 1), not copy garbage.
#include <omp.h>
#include <stdio.h>

int main(void) {
  long value = 0;
  void* bogus = (void*)0x1234;
  const int status =
      omp_target_memcpy(&value, bogus, sizeof value, 0, 0, omp_get_initial_device(), 0);
  printf("bad_device_address: omp_target_memcpy returned %d\n", status);
  return status != 0 ? 1 : 0;
}
