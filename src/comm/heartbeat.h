// The failure detector's messages (runtime/watchdog.h): a seam of its own,
// apart from the transport, because its thread runs beside the engine's and
// must keep beating while a task holds the engine's thread for minutes.
// Messages are tiny and never wait for the receiver: a stopped rank must not
// stop the one telling the others about it.
#pragma once

#include <cstdint>

namespace taskgrid::comm {

struct HeartbeatMessage {
  enum Kind : int32_t {
    alive = 1,    // to the successor in the ring, every period
    leaving = 2,  // to the successor: stop watching me, I am finishing
    stopped = 3,  // to everyone: `rank` stopped responding (the detector tells the others)
  };
  int32_t kind = alive;
  int32_t rank = -1;      // stopped: the silent rank
  int64_t silent_ms = 0;  // stopped: how long it had been silent
};

class HeartbeatLink {
 public:
  virtual ~HeartbeatLink() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Returns at once, whether or not `dest` receives.
  virtual void send(int dest, const HeartbeatMessage& message) = 0;
  // One message that has arrived, if any (non-blocking).
  virtual bool receive(int& source, HeartbeatMessage& message) = 0;
};

}  // namespace taskgrid::comm
