// N ranks in one simulation: a Transport for each on a simulated host of
// SimGrid S4U. Runs the real planners and engines, unchanged, with their
// threads as actors, their waits and sleeps in simulated time (S4uBlocking,
// sleep_ns, idle) and their messages as simulated network transfers.
//
// Each rank's mailbox has a receiver actor (permanent receiver: transfers
// start at send time and proceed in parallel) that hands every message, in
// the order they reach the mailbox, to the loopback backend's matching rules:
// data and chunk messages are two streams, and within a stream messages from
// one source with one tag match receives in the order they were sent. A send
// completes at once (the bytes are copied into the message); a receive when
// its message has arrived in simulated time. Control batches arrive whole, in
// order per sender. Group broadcasts are the root's messages to each member.
//
// Must be made, used and destroyed inside a running simulation (by actors).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "comm/s4u/blocking.h"
#include "comm/transport.h"

namespace simgrid::s4u {
class Host;
}

namespace taskgrid::comm::s4u {

// Simulated time now, in nanoseconds (the transports' clock, and the runtime's
// in a simulation: Simulation points trace::now_ns here).
uint64_t simulated_ns();

class S4uFabric {
 public:
  // One rank per host, rank r on hosts[r]. `message_overhead`: seconds of
  // the MPI library's own work per message, charged to the sending thread
  // (as computation on its core) and to the receiver (before delivery).
  explicit S4uFabric(const std::vector<simgrid::s4u::Host*>& hosts, double message_overhead = 0);
  // Stops the receivers (an actor must call it).
  ~S4uFabric();
  S4uFabric(const S4uFabric&) = delete;
  S4uFabric& operator=(const S4uFabric&) = delete;

  int size() const { return static_cast<int>(endpoints_.size()); }
  Transport& transport(int rank);
  // Messages sent so far, every rank together: data, chunk and group
  // messages, and control batches.
  uint64_t data_messages() const { return data_messages_; }
  uint64_t control_messages() const { return control_messages_; }
  // Bytes of data and chunk messages sent so far.
  uint64_t data_bytes() const { return data_bytes_; }

 private:
  class Endpoint;
  friend class Endpoint;
  struct Group;

  const uint64_t id_;  // tells the mailboxes of successive fabrics apart
  const double message_overhead_;
  S4uBlocking blocking_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
  std::vector<std::vector<int32_t>> group_members_;  // per group id - 1
  uint64_t data_messages_ = 0;
  uint64_t control_messages_ = 0;
  uint64_t data_bytes_ = 0;
};

}  // namespace taskgrid::comm::s4u
