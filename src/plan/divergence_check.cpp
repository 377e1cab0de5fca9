#include "plan/divergence_check.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <thread>
#include <vector>

#include "core/access_mode.h"
#include "core/failure.h"
#include "core/function_registry.h"

namespace taskgrid::plan {
namespace {

// Mark an enter_data and a fetch record's shape (a task's shape stays below
// 2^62: fewer than 2^30 argument bytes).
constexpr uint64_t kData = uint64_t{1} << 63;
constexpr uint64_t kFetch = uint64_t{1} << 62;
// One per kind of word pair, so that pairs of different kinds never collide.
constexpr uint64_t kHeadSeed = 0x9E3779B97F4A7C15ULL;
constexpr uint64_t kAccessSeed = 0xBF58476D1CE4E5B9ULL;
constexpr uint64_t kArgsSeed = 0x94D049BB133111EBULL;

__extension__ typedef unsigned __int128 Wide;

// Two words into the hash with one 64x64-bit multiply, both halves of the
// product folded: every input bit reaches every output bit, so a difference
// anywhere in a submission changes the hash, and no structured pair of
// differences cancels out (as two top-bit flips would in a plain
// multiply-xor). The seed keeps a zero second word from zeroing the product;
// the first factor is zero only when the word equals the running hash, which
// is never 0 to start with and looks random after that.
inline uint64_t mix(uint64_t hash, uint64_t a, uint64_t b, uint64_t seed) {
  const Wide product = static_cast<Wide>(hash ^ a) * (b ^ seed);
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}

inline uint64_t access_word(const DataAccess& access) {
  return access.handle.id * 4 + static_cast<uint64_t>(access.mode);
}

inline uint64_t load64(const unsigned char* p) {
  uint64_t word;
  std::memcpy(&word, p, 8);
  return word;
}

inline uint64_t load32(const unsigned char* p) {
  uint32_t word;
  std::memcpy(&word, p, 4);
  return word;
}

// The argument bytes, 16 at a time. The last pair of words may overlap the
// one before it: with the length already hashed, that still covers every
// byte at a fixed place.
inline uint64_t mix_bytes(uint64_t hash, const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (bytes > 16) {
    const unsigned char* last = p + bytes - 16;
    for (; p < last; p += 16) hash = mix(hash, load64(p), load64(p + 8), kArgsSeed);
    return mix(hash, load64(last), load64(last + 8), kArgsSeed);
  }
  if (bytes > 8) return mix(hash, load64(p), load64(p + bytes - 8), kArgsSeed);
  if (bytes >= 4) return mix(hash, load32(p) | load32(p + bytes - 4) << 32, 0, kArgsSeed);
  if (bytes > 0)
    return mix(hash, p[0] | uint64_t{p[bytes / 2]} << 8 | uint64_t{p[bytes - 1]} << 16, 0,
               kArgsSeed);
  return hash;
}

}  // namespace

DivergenceCheck::DivergenceCheck(comm::Collectives& collectives, uint64_t interval)
    : collectives_(collectives), interval_(std::clamp<uint64_t>(interval, 1, kMaxInterval)) {
  // Twice the interval: room for enter_data calls between check points.
  const uint64_t capacity = std::bit_ceil(std::max<uint64_t>(64, 2 * interval_));
  mask_ = capacity - 1;
  ring_ = std::make_unique<Record[]>(capacity);
}

DivergenceCheck::~DivergenceCheck() = default;

void DivergenceCheck::record_task(uint32_t function, const DataAccess* accesses, size_t count,
                                  int rank_hint, const void* args, size_t args_bytes) {
  Record& record = ring_[count_ & mask_];
  const uint64_t head = function | uint64_t{static_cast<uint32_t>(rank_hint)} << 32;
  const uint64_t shape = count | uint64_t{args_bytes} << 32;
  record.head = head;
  record.shape = shape;
  uint64_t hash = mix(hash_, head, shape, kHeadSeed);
  // Accesses in pairs; the first four are also kept for the report.
  size_t i = 0;
  for (; i + 1 < count; i += 2) {
    const uint64_t a = access_word(accesses[i]), b = access_word(accesses[i + 1]);
    if (i < 4) {
      record.words[i] = a;
      record.words[i + 1] = b;
    }
    hash = mix(hash, a, b, kAccessSeed);
  }
  if (i < count) {
    const uint64_t a = access_word(accesses[i]);
    if (i < 4) record.words[i] = a;
    hash = mix(hash, a, 0, kAccessSeed);
  }
  hash = mix_bytes(hash, args, args_bytes);
  record.hash = hash;
  hash_ = hash;
  count_ += 1;
}

void DivergenceCheck::record_data(size_t bytes, int owner) {
  record_call(uint64_t{static_cast<uint32_t>(owner)} << 32, bytes | kData);
}

void DivergenceCheck::record_fetch(uint64_t handle, int to) {
  record_call(uint64_t{static_cast<uint32_t>(to)} << 32, handle | kFetch);
}

void DivergenceCheck::record_call(uint64_t head, uint64_t shape) {
  Record& record = ring_[count_ & mask_];
  record.head = head;
  record.shape = shape;
  hash_ = mix(hash_, head, shape, kHeadSeed);
  record.hash = hash_;
  count_ += 1;
}

void DivergenceCheck::check() {
  const std::optional<std::string> report = compare();
  if (!report) return;
  if (collectives_.rank() == 0) core::fail_job(0, *report);
  // Let rank 0 print its full message; it aborts the job for everyone.
  collectives_.barrier();
  core::fail_job(collectives_.rank(),
                 "spmd ranks submitted different sequences (details on rank 0)");
}

std::optional<std::string> DivergenceCheck::compare() {
  // max and min of (count, hash) agree iff every rank has the same pair.
  uint64_t values[4] = {count_, hash_, ~count_, ~hash_};
  const std::function<bool()> done = collectives_.start_allreduce_max(values, 4);
  if (waiter_) {
    waiter_(done);
  } else {
    while (!done()) std::this_thread::yield();  // no planner (the unit tests')
  }
  if (values[0] == ~values[2] && values[1] == ~values[3]) {
    window_start_ = count_;
    return std::nullopt;
  }
  return report();
}

std::string DivergenceCheck::report() {
  // Every rank agreed up to window_start_. Compare the positions after it
  // that every rank still holds, up to the end of the longest sequence.
  const uint64_t capacity = mask_ + 1;
  uint64_t bounds[2] = {std::max(window_start_, count_ > capacity ? count_ - capacity : 0), count_};
  collectives_.allreduce_max(bounds, 2);
  const uint64_t begin = bounds[0], end = bounds[1];
  std::vector<uint64_t> hashes(2 * (end - begin));
  for (uint64_t p = begin; p < end; ++p) {
    // A missing submission counts as a hash no real one has.
    const uint64_t h = p < count_ ? ring_[p & mask_].hash : 0;
    hashes[2 * (p - begin)] = h;
    hashes[2 * (p - begin) + 1] = ~h;
  }
  collectives_.allreduce_max(hashes.data(), hashes.size());
  // Before the first differing submission the running hashes are equal; from
  // it on they differ.
  uint64_t first = begin;
  while (first < end && hashes[2 * (first - begin)] == ~hashes[2 * (first - begin) + 1]) ++first;

  // Every rank describes its own submission at that position; rank 0 prints.
  const std::string mine = describe(first);
  const std::vector<std::vector<char>> all = collectives_.gather(0, mine.data(), mine.size());
  if (collectives_.rank() != 0) return {};
  std::string message = "spmd ranks submitted different sequences; first difference:";
  for (size_t r = 0; r < all.size(); ++r)
    message += "\n  rank " + std::to_string(r) + ": " + std::string(all[r].begin(), all[r].end());
  if (first == begin && begin > window_start_)
    message += "\n  (submissions #" + std::to_string(window_start_ + 1) + " to #" +
               std::to_string(begin) + " are no longer recorded; the difference may be earlier)";
  return message;
}

std::string DivergenceCheck::describe(uint64_t position) const {
  const uint64_t number = position + 1;
  if (position >= count_)
    return "submitted nothing as submission #" + std::to_string(number) + " (it has " +
           std::to_string(count_) + ")";
  const Record& r = ring_[position & mask_];
  const int hint = static_cast<int32_t>(static_cast<uint32_t>(r.head >> 32));
  if (r.shape & kData)
    return "submission #" + std::to_string(number) + " is enter_data(" +
           std::to_string(r.shape & ~kData) + " bytes, owner " + std::to_string(hint) + ")";
  if (r.shape & kFetch) {
    // hint: -2 (the owner), -1 (all ranks) or a rank; see Planner::fetch.
    const std::string to = hint == -2   ? "the owner"
                           : hint == -1 ? "all ranks"
                                        : "rank " + std::to_string(hint);
    return "submission #" + std::to_string(number) + " is fetch(handle " +
           std::to_string(r.shape & ~kFetch) + ", to " + to + ")";
  }
  const uint64_t accesses = r.shape & 0xFFFFFFFFu;
  const detail::RegisteredFunction* f =
      detail::find_function(FunctionId{static_cast<uint32_t>(r.head)});
  std::string text = "submission #" + std::to_string(number) + " is task '" + (f ? f->name : "?") +
                     "' with " + std::to_string(accesses) + " accesses (";
  for (uint64_t i = 0; i < std::min<uint64_t>(accesses, 3); ++i)
    text += std::string(i ? ", " : "") +
            core::access_mode_name(static_cast<AccessMode>(r.words[i] & 3)) + " handle " +
            std::to_string(r.words[i] >> 2);
  if (accesses > 3) text += ", ...";
  text += "), rank hint " + std::to_string(hint) + ", " + std::to_string(r.shape >> 32) +
          " argument bytes";
  return text;
}

}  // namespace taskgrid::plan
