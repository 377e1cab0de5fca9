#include "runtime/divergence_check.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "runtime/engine.h"
#include "runtime/function_registry.h"

namespace taskgrid::runtime {
namespace {

uint64_t mix(uint64_t h, uint64_t value) {
  // A splitmix step: order-sensitive, cheap, well spread.
  h ^= value + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ULL;
  return h ^ (h >> 29);
}

uint64_t bytes_digest(const void* data, size_t bytes) {
  uint64_t h = bytes;
  const auto* p = static_cast<const unsigned char*>(data);
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t word;
    std::memcpy(&word, p + i, 8);
    h = mix(h, word);
  }
  for (; i < bytes; ++i) h = mix(h, p[i]);
  return h;
}

const char* mode_name(uint8_t mode) {
  switch (mode) {
    case 1:
      return "in";
    case 2:
      return "out";
    default:
      return "inout";
  }
}

}  // namespace

DivergenceCheck::DivergenceCheck(MPI_Comm comm, uint64_t interval)
    : interval_(std::max<uint64_t>(1, interval)) {
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_rank(comm_, &rank_);
}

DivergenceCheck::~DivergenceCheck() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void DivergenceCheck::fold(const Submission& s) {
  hash_ = mix(hash_, s.digest);
  count_ += 1;
  since_check_ += 1;
  window_.push_back(s);
}

void DivergenceCheck::record_task(uint32_t function, const DataAccess* accesses, size_t count,
                                  int rank_hint, const void* args, size_t args_bytes) {
  Submission s{};
  s.function = function;
  s.accesses = static_cast<uint32_t>(count);
  s.hint = rank_hint;
  s.bytes = args_bytes;
  uint64_t d = mix(function, static_cast<uint64_t>(rank_hint) + 1);
  for (size_t i = 0; i < count; ++i) {
    d = mix(d, accesses[i].handle.id * 4 + static_cast<uint64_t>(accesses[i].mode));
    if (i < 3) {
      s.first_handles[i] = accesses[i].handle.id;
      s.first_modes[i] = static_cast<uint8_t>(accesses[i].mode);
    }
  }
  s.digest = mix(d, bytes_digest(args, args_bytes));
  fold(s);
}

void DivergenceCheck::record_data(size_t bytes, int owner) {
  Submission s{};
  s.hint = owner;
  s.bytes = bytes;
  s.digest = mix(mix(0xDA7A, bytes), static_cast<uint64_t>(owner) + 1);
  fold(s);
}

void DivergenceCheck::check() {
  // max and min of (count, hash) agree iff every rank has the same pair.
  uint64_t mine[4] = {count_, hash_, ~count_, ~hash_};
  uint64_t reduced[4];
  MPI_Allreduce(mine, reduced, 4, MPI_UINT64_T, MPI_MAX, comm_);
  since_check_ = 0;
  if (reduced[0] == ~reduced[2] && reduced[1] == ~reduced[3]) {
    window_start_ = count_;
    window_.clear();
    return;
  }
  report_divergence();
}

std::string DivergenceCheck::describe(size_t index) const {
  const uint64_t number = window_start_ + index + 1;
  if (index >= window_.size())
    return "submitted nothing as submission #" + std::to_string(number) + " (it has " +
           std::to_string(count_) + ")";
  const Submission& s = window_[index];
  if (s.function == 0)
    return "submission #" + std::to_string(number) + " is enter_data(" + std::to_string(s.bytes) +
           " bytes, owner " + std::to_string(s.hint) + ")";
  const detail::RegisteredFunction* f = detail::find_function(FunctionId{s.function});
  std::string text = "submission #" + std::to_string(number) + " is task '" +
                     (f ? f->name : "?") + "' with " + std::to_string(s.accesses) + " accesses (";
  for (uint32_t i = 0; i < std::min<uint32_t>(s.accesses, 3); ++i)
    text += std::string(i ? ", " : "") + mode_name(s.first_modes[i]) + " handle " +
            std::to_string(s.first_handles[i]);
  if (s.accesses > 3) text += ", ...";
  text += "), rank hint " + std::to_string(s.hint) + ", " + std::to_string(s.bytes) + " argument bytes";
  return text;
}

void DivergenceCheck::report_divergence() {
  int size = 1;
  MPI_Comm_size(comm_, &size);
  // Find the first position where the ranks' submission digests differ.
  uint64_t length = window_.size(), longest = 0;
  MPI_Allreduce(&length, &longest, 1, MPI_UINT64_T, MPI_MAX, comm_);
  std::vector<uint64_t> high(longest), low(longest);
  for (uint64_t i = 0; i < longest; ++i) {
    // Missing submissions count as a digest no real one has.
    const uint64_t d = i < window_.size() ? window_[i].digest : 0;
    high[i] = d;
    low[i] = ~d;
  }
  std::vector<uint64_t> high_all(longest), low_all(longest);
  MPI_Allreduce(high.data(), high_all.data(), static_cast<int>(longest), MPI_UINT64_T, MPI_MAX, comm_);
  MPI_Allreduce(low.data(), low_all.data(), static_cast<int>(longest), MPI_UINT64_T, MPI_MAX, comm_);
  size_t first = 0;
  while (first < longest && high_all[first] == ~low_all[first]) ++first;

  // Every rank describes its own submission at that position; rank 0 prints.
  const std::string mine = describe(first);
  int my_length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<size_t>(size)), offsets(static_cast<size_t>(size));
  MPI_Gather(&my_length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm_);
  std::string all;
  if (rank_ == 0) {
    int total = 0;
    for (int r = 0; r < size; ++r) {
      offsets[static_cast<size_t>(r)] = total;
      total += lengths[static_cast<size_t>(r)];
    }
    all.resize(static_cast<size_t>(total));
  }
  MPI_Gatherv(mine.data(), my_length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
              MPI_CHAR, 0, comm_);
  if (rank_ == 0) {
    std::string message = "spmd ranks submitted different sequences; first difference:";
    for (int r = 0; r < size; ++r)
      message += "\n  rank " + std::to_string(r) + ": " +
                 all.substr(static_cast<size_t>(offsets[static_cast<size_t>(r)]),
                            static_cast<size_t>(lengths[static_cast<size_t>(r)]));
    fail_job(0, message);
  }
  // Let rank 0 print its full message; it aborts the job for everyone.
  MPI_Barrier(comm_);
  fail_job(rank_, "spmd ranks submitted different sequences (details on rank 0)");
}

}  // namespace taskgrid::runtime
