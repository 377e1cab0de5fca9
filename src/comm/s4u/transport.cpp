#include "comm/s4u/transport.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <string>

#include "comm/message_matching.h"

namespace taskgrid::comm::s4u {

namespace sg = simgrid::s4u;

namespace {

enum Stream : int { kData = 0, kChunk = 1, kGroup = 2, kControl = 3, kStop = 4 };

struct Message {
  int stream;
  int source;
  int tag;
  std::vector<char> bytes;
  uint64_t send_cookie = 0;  // completes at the sender on delivery (rendezvous)
  bool rendezvous = false;
};

// Sends up to this size complete when posted, as MPI's eager protocol does
// (UCX's threshold on InfiniBand is of this order); larger ones only once the
// receiver holds the data, as its rendezvous does. A sender's window of
// chunks in flight (tree and pipeline broadcasts) then limits what shares
// its link, as on a real network: completing every send at once let a root
// post all its chunks together, the link shared among them delivered all at
// the end, and a pipeline was no faster than on-demand delivery. Below the
// smallest pipeline chunk (64 KiB, coll/broadcast.cpp).
constexpr size_t kEagerBytes = size_t{16} << 10;

// An idle engine sleeps until a message, a submission or a finished task
// wakes it, or for this long in simulated time at first: half the shortest
// age after which a batch must leave (the planner's 100 us).
constexpr uint64_t kIdleTimeoutNs = 50'000;

uint64_t next_fabric_id() {
  static uint64_t fabrics = 0;  // actors run one at a time
  return fabrics++;
}

}  // namespace

uint64_t simulated_ns() { return static_cast<uint64_t>(sg::Engine::get_clock() * 1e9 + 0.5); }

class S4uFabric::Endpoint final : public Transport {
 public:
  Endpoint(S4uFabric& fabric, int rank, sg::Host* host)
      : fabric_(fabric),
        rank_(rank),
        host_(host),
        mailbox_(sg::Mailbox::by_name("taskgrid-" + std::to_string(fabric.id_) + "-rank-" +
                                      std::to_string(rank))),
        matching_([this](const std::string& what) { fail(what); }) {}

  void start() {
    receiver_ =
        sg::Actor::create("receiver-" + std::to_string(rank_), host_, [this] { receive_loop(); });
    receiver_->daemonize();
    mailbox_->set_receiver(receiver_);
  }
  void stop() {
    mailbox_->put_init(new Message{kStop, rank_, 0, {}}, 0)->detach();
    receiver_->join();
    mailbox_->set_receiver(nullptr);
  }

  int rank() const override { return rank_; }
  int size() const override { return fabric_.size(); }
  int max_tag() const override { return 1 << 30; }
  Blocking& blocking() override { return fabric_.blocking_; }

  uint64_t now_ns() const override { return simulated_ns(); }
  void idle(IdleBackoff&, Wakeup& wakeup, bool) override {
    wakeup_ = &wakeup;
    // Each timeout is an event of the simulation (its wall time): an engine
    // that keeps timing out waits twice as long each time, up to 16x.
    const double start = sg::Engine::get_clock();
    wakeup.wait_for(std::chrono::microseconds(idle_timeout_ns_ / 1000),
                    [this] { return !control_.empty() || matching_.has_finished(); });
    const bool timed_out =
        (sg::Engine::get_clock() - start) * 1e9 >= static_cast<double>(idle_timeout_ns_) * 0.999;
    idle_timeout_ns_ =
        timed_out ? std::min(idle_timeout_ns_ * 2, 16 * kIdleTimeoutNs) : kIdleTimeoutNs;
  }
  std::unique_ptr<Thread> start_thread(std::function<void()> body) override {
    class ActorThread final : public Thread {
     public:
      explicit ActorThread(sg::ActorPtr actor) : actor_(std::move(actor)) {}
      ~ActorThread() override { join(); }
      void join() override {
        if (actor_) actor_->join();
        actor_ = nullptr;
      }

     private:
      sg::ActorPtr actor_;
    };
    threads_started_ += 1;
    return std::make_unique<ActorThread>(sg::Actor::create(
        "rank-" + std::to_string(rank_) + "-thread-" + std::to_string(threads_started_), host_,
        std::move(body)));
  }
  void sleep_ns(uint64_t ns) override { sg::this_actor::sleep_for(static_cast<double>(ns) * 1e-9); }

  void send_control(int dest, std::vector<char>&& batch) override {
    fabric_.control_messages_ += 1;
    const size_t bytes = batch.size();
    post(dest, new Message{kControl, rank_, 0, std::move(batch)}, bytes);
  }
  bool receive_control(int& source, std::vector<char>& batch) override {
    if (control_.empty()) return false;
    source = control_.front().first;
    batch = std::move(control_.front().second);
    control_.pop_front();
    return true;
  }

  void send_data(int dest, int tag, const void* data, size_t bytes, uint64_t cookie) override {
    send(kData, dest, tag, data, bytes, cookie);
  }
  void receive_data(int source, int tag, void* data, size_t bytes, uint64_t cookie) override {
    receive(kData, source, tag, data, bytes, cookie);
  }
  void send_chunk(int dest, int tag, const void* data, size_t bytes, uint64_t cookie) override {
    send(kChunk, dest, tag, data, bytes, cookie);
  }
  void receive_chunk(int source, int tag, void* data, size_t bytes, uint64_t cookie) override {
    receive(kChunk, source, tag, data, bytes, cookie);
  }
  size_t max_chunk() const override { return size_t{1} << 30; }

  int create_group(const std::vector<int32_t>& members, int) override {
    auto& all = fabric_.group_members_;
    int id = 0;
    for (size_t g = 0; g < all.size() && id == 0; ++g)
      if (all[g] == members) id = static_cast<int>(g) + 1;
    if (id == 0) {
      all.push_back(members);
      id = static_cast<int>(all.size());
    }
    my_groups_.emplace(members, id);
    return id;
  }
  int find_group(const std::vector<int32_t>& members) override {
    auto it = my_groups_.find(members);
    return it == my_groups_.end() ? 0 : it->second;
  }
  void broadcast_chunk(int group, int root, void* data, size_t bytes, uint64_t cookie) override {
    const std::vector<int32_t> members = fabric_.group_members_.at(static_cast<size_t>(group - 1));
    const int root_rank = members.at(static_cast<size_t>(root));
    if (root_rank != rank_) {
      receive(kGroup, root_rank, group, data, bytes, cookie);
      return;
    }
    for (int32_t member : members)
      if (member != rank_) send(kGroup, member, group, data, bytes, 0, false);
    matching_.finished(cookie);
  }

  bool poll(std::vector<uint64_t>& finished) override { return matching_.take_finished(finished); }
  size_t pending() const override { return matching_.pending() + sends_in_flight_; }
  bool copying_bulk_data() const override { return false; }
  bool same_node(int peer) const override { return peer == rank_; }
  [[noreturn]] void abort_job(int status) override {
    std::fprintf(stderr, "s4u transport: rank %d ends the simulation (status %d) at %.9f s\n",
                 rank_, status, sg::Engine::get_clock());
    std::fflush(nullptr);
    std::_Exit(status == 0 ? 1 : status);
  }

 private:
  Endpoint& peer(int rank) {
    if (rank < 0 || rank >= fabric_.size()) fail("a message to rank " + std::to_string(rank));
    return *fabric_.endpoints_[static_cast<size_t>(rank)];
  }
  [[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "s4u transport: rank %d: %s\n", rank_, what.c_str());
    abort_job(1);
  }

  // Hands `message` to the network: it reaches `dest`'s receiver after the
  // simulated transfer of `bytes`. The MPI library's work on the sending
  // side comes first, on this rank's core, as a real send's does (SMPI's
  // smpi/ois for the baseline): sender's work, flight and receiver's work
  // add up on the critical path, none hidden behind another. May switch
  // actors.
  void post(int dest, Message* message, size_t bytes) {
    Endpoint& to = peer(dest);
    if (fabric_.message_overhead_ > 0)
      sg::this_actor::execute(fabric_.message_overhead_ * host_->get_speed());
    to.mailbox_->put_init(message, bytes)->detach();
  }

  void send(int stream, int dest, int tag, const void* data, size_t bytes, uint64_t cookie,
            bool complete = true) {
    fabric_.data_messages_ += 1;
    fabric_.data_bytes_ += bytes;
    const char* from = static_cast<const char*>(data);
    auto* message = new Message{stream, rank_, tag, std::vector<char>(from, from + bytes)};
    // Recorded before post() may switch actors.
    if (complete && bytes > kEagerBytes) {
      message->send_cookie = cookie;
      message->rendezvous = true;
      sends_in_flight_ += 1;
    } else if (complete) {
      matching_.finished(cookie);  // the bytes are copied
    }
    post(dest, message, bytes);
  }

  // A rendezvous send of this rank's reached its receiver.
  void send_delivered(uint64_t cookie) {
    sends_in_flight_ -= 1;
    matching_.finished(cookie);
    if (wakeup_) wakeup_->notify();
  }

  void receive(int stream, int source, int tag, void* data, size_t bytes, uint64_t cookie) {
    matching_.post(stream, source, tag, data, bytes, cookie);
  }

  // The receiver actor: every message in mailbox order, until stop().
  void receive_loop() {
    for (;;) {
      std::unique_ptr<Message> message(mailbox_->get<Message>());
      if (message->stream == kStop) return;
      if (fabric_.message_overhead_ > 0) sg::this_actor::sleep_for(fabric_.message_overhead_);
      deliver(*message);
      if (message->rendezvous) peer(message->source).send_delivered(message->send_cookie);
      if (wakeup_) wakeup_->notify();
    }
  }

  void deliver(Message& message) {
    if (message.stream == kControl)
      control_.emplace_back(message.source, std::move(message.bytes));
    else
      matching_.arrive(message.stream, message.source, message.tag, message.bytes.data(),
                       message.bytes.size());
  }

  S4uFabric& fabric_;
  const int rank_;
  sg::Host* const host_;
  sg::Mailbox* const mailbox_;
  sg::ActorPtr receiver_;
  Wakeup* wakeup_ = nullptr;  // the engine's, once it idled
  uint64_t idle_timeout_ns_ = kIdleTimeoutNs;
  uint64_t threads_started_ = 0;
  size_t sends_in_flight_ = 0;  // rendezvous sends not delivered yet
  // Actors run one at a time and switch only in simcalls, none of which is
  // made while these change: no lock.
  std::deque<std::pair<int, std::vector<char>>> control_;
  MessageMatching matching_;
  std::map<std::vector<int32_t>, int> my_groups_;  // created by this rank
};

S4uFabric::S4uFabric(const std::vector<sg::Host*>& hosts, double message_overhead)
    : id_(next_fabric_id()), message_overhead_(message_overhead) {
  for (size_t r = 0; r < hosts.size(); ++r)
    endpoints_.push_back(std::make_unique<Endpoint>(*this, static_cast<int>(r), hosts[r]));
  for (auto& endpoint : endpoints_) endpoint->start();
}

S4uFabric::~S4uFabric() {
  for (auto& endpoint : endpoints_) endpoint->stop();
}

Transport& S4uFabric::transport(int rank) { return *endpoints_.at(static_cast<size_t>(rank)); }

}  // namespace taskgrid::comm::s4u
