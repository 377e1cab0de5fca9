// MPI's matching rules for the in-process backends (comm/loopback, comm/s4u),
// one rank's side: a message matches the oldest receive posted for its
// (stream, source, tag), else waits as unexpected for the next such receive;
// so messages from one source with one tag land in the order they arrive.
// Completed receives (and whatever the backend completes itself: sends)
// collect as cookies for Transport::poll(). Not thread-safe: the backend
// guards it.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace taskgrid::comm {

class MessageMatching {
 public:
  // `fail`: how a size mismatch ends the job (it must not return).
  explicit MessageMatching(std::function<void(const std::string&)> fail) : fail_(std::move(fail)) {}

  // A receive of `bytes` into `data`: completes now from an unexpected
  // message, else when one arrives.
  void post(int stream, int source, int tag, void* data, size_t bytes, uint64_t cookie) {
    const Key key{stream, source, tag};
    auto arrived = unexpected_.find(key);
    if (arrived != unexpected_.end() && !arrived->second.empty()) {
      std::vector<char> message = std::move(arrived->second.front());
      arrived->second.pop_front();
      if (message.size() != bytes)
        fail_("a receive of " + std::to_string(bytes) + " bytes from rank " +
              std::to_string(source) + " (tag " + std::to_string(tag) + ") got " +
              std::to_string(message.size()));
      if (bytes) std::memcpy(data, message.data(), bytes);
      finished_.push_back(cookie);
      return;
    }
    posted_[key].push_back(Posted{data, bytes, cookie});
    posted_count_ += 1;
  }

  // A message of `bytes` from `source`: copied into the oldest matching
  // receive (which completes), else kept.
  void arrive(int stream, int source, int tag, const void* data, size_t bytes) {
    const Key key{stream, source, tag};
    auto posted = posted_.find(key);
    if (posted == posted_.end() || posted->second.empty()) {
      const char* from = static_cast<const char*>(data);
      unexpected_[key].emplace_back(from, from + bytes);
      return;
    }
    const Posted receive = posted->second.front();
    posted->second.pop_front();
    posted_count_ -= 1;
    if (receive.bytes != bytes)
      fail_("a message of " + std::to_string(bytes) + " bytes from rank " + std::to_string(source) +
            " (tag " + std::to_string(tag) + ") for a receive of " + std::to_string(receive.bytes));
    if (bytes) std::memcpy(receive.data, data, bytes);
    finished_.push_back(receive.cookie);
  }

  // An operation the backend completed itself (a send: its bytes are copied).
  void finished(uint64_t cookie) { finished_.push_back(cookie); }
  // Appends the completed cookies to `out`; true when there were any.
  bool take_finished(std::vector<uint64_t>& out) {
    if (finished_.empty()) return false;
    out.insert(out.end(), finished_.begin(), finished_.end());
    finished_.clear();
    return true;
  }
  bool has_finished() const { return !finished_.empty(); }
  // Receives posted and not complete, and completions not taken yet.
  size_t pending() const { return posted_count_ + finished_.size(); }

 private:
  using Key = std::tuple<int, int, int>;  // stream, source, tag
  struct Posted {
    void* data;
    size_t bytes;
    uint64_t cookie;
  };
  std::function<void(const std::string&)> fail_;
  std::map<Key, std::deque<std::vector<char>>> unexpected_;
  std::map<Key, std::deque<Posted>> posted_;
  size_t posted_count_ = 0;
  std::vector<uint64_t> finished_;
};

}  // namespace taskgrid::comm
