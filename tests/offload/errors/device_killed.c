// The device rank of device 0 is killed (SIGKILL) inside a kernel: the job
// must end with a non-zero status, not hang. (MPICH's launcher ends it at
// once and names the killed process; the plugin gets no word in.)
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  int x = 1;
#pragma omp target device(0) map(tofrom : x)
  {
    if (x == 1) kill(getpid(), SIGKILL);
    x = 2;
  }
  printf("device_killed: the region returned (x=%d)\n", x);
  return 3;
}
