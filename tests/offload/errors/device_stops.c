// The device rank of device 0 stops (SIGSTOP) inside a kernel, as a frozen
// node would: the runtime's heartbeats must end the job with a message
// naming the rank, the device and the kernel, instead of a hang.
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  int x = 1;
#pragma omp target device(0) map(tofrom : x)
  {
    if (x == 1) kill(getpid(), SIGSTOP);
    x = 2;
  }
  printf("device_stops: the region returned (x=%d)\n", x);
  return 3;
}
