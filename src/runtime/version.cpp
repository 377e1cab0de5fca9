// The library's version, compiled in from the generated version.h, so a
// program can tell the headers' version from the library's.
#include "taskgrid/version.h"

extern "C" const char* tg_version(void) { return TASKGRID_VERSION_STRING; }

namespace taskgrid {

const char* version() { return TASKGRID_VERSION_STRING; }

}  // namespace taskgrid
