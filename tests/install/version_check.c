/* The version API from C: the macros and tg_version() agree with the CMake
 * project version (EXPECTED_VERSION). */
#include <stdio.h>
#include <string.h>

#include "taskgrid/taskgrid.h"

#if TASKGRID_VERSION != \
    TASKGRID_VERSION_MAJOR * 10000 + TASKGRID_VERSION_MINOR * 100 + TASKGRID_VERSION_PATCH
#error "TASKGRID_VERSION does not combine MAJOR, MINOR and PATCH"
#endif

int main(void) {
  char joined[64];
  snprintf(joined, sizeof joined, "%d.%d.%d", TASKGRID_VERSION_MAJOR, TASKGRID_VERSION_MINOR,
           TASKGRID_VERSION_PATCH);
  if (strcmp(TASKGRID_VERSION_STRING, EXPECTED_VERSION) != 0 ||
      strcmp(joined, EXPECTED_VERSION) != 0 || strcmp(tg_version(), EXPECTED_VERSION) != 0) {
    fprintf(stderr, "version mismatch: macro %s, parts %s, tg_version() %s, project %s\n",
            TASKGRID_VERSION_STRING, joined, tg_version(), EXPECTED_VERSION);
    return 1;
  }
  printf("taskgrid %s\n", tg_version());
  return 0;
}
