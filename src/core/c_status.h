// How the C APIs (taskgrid.h, pgas.h) report failures: every entry point runs
// its body through guarded(), which turns any exception into a status code
// and keeps the message for tg_last_error() (thread-local).
#pragma once

#include <exception>
#include <new>
#include <string>

#include "taskgrid/taskgrid.h"

namespace taskgrid::core::c_status {

// Keeps `message` as this thread's tg_last_error() (c_api.cpp).
void set_last_error(const char* message) noexcept;
// This thread's last message.
const char* last_error() noexcept;

// A failure detected in a C entry point, with its status code.
struct CError {
  int code;
  std::string message;
};

[[noreturn]] inline void fail(int code, const char* function, const char* what) {
  throw CError{code, std::string(function) + ": " + what};
}

template <typename Body>
int guarded(Body&& body) noexcept {
  try {
    body();
    return TG_SUCCESS;
  } catch (const CError& error) {
    set_last_error(error.message.c_str());
    return error.code;
  } catch (const std::bad_alloc&) {
    set_last_error("taskgrid: out of memory");
    return TG_ERROR;
  } catch (const std::exception& error) {
    set_last_error(error.what());
    return TG_ERROR;
  } catch (...) {
    set_last_error("taskgrid: unknown exception");
    return TG_ERROR;
  }
}

}  // namespace taskgrid::core::c_status
