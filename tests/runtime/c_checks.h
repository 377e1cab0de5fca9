/* Checks shared by the C API test programs (C99). Each check counts, prints
 * "ok: ..." or "FAIL: ..." and goes on; the program reports the totals. */
#ifndef TASKGRID_TESTS_C_CHECKS_H
#define TASKGRID_TESTS_C_CHECKS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskgrid/taskgrid.h"

static int checks = 0;
static int failures = 0;

/* A call that must fail with `expected` (any error code when TG_SUCCESS) and
 * leave a non-empty message containing `message_part` (any when NULL). */
static inline void expect_error(int status, int expected, const char* message_part,
                                const char* what) {
  const char* message = tg_last_error();
  ++checks;
  if (status == TG_SUCCESS || (expected != TG_SUCCESS && status != expected) || !message ||
      message[0] == '\0' || (message_part && !strstr(message, message_part))) {
    ++failures;
    printf("FAIL: %s: status %d (expected %d), message \"%s\"\n", what, status, expected,
           message ? message : "(null)");
    return;
  }
  printf("ok: %s: %d \"%s\"\n", what, status, message);
}

static inline void expect_true(int condition, const char* what) {
  ++checks;
  if (!condition) {
    ++failures;
    printf("FAIL: %s\n", what);
  }
}

/* A call the test cannot go on without: exits with status 2. The program
 * defines C_CHECKS_PROGRAM (its name) before including this header. */
static inline void must(int status, const char* what) {
  if (status != TG_SUCCESS) {
    fprintf(stderr, "%s: %s failed (%d): %s\n", C_CHECKS_PROGRAM, what, status, tg_last_error());
    exit(2);
  }
}

#endif
