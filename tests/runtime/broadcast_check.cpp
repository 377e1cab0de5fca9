// Multi-rank correctness check of the runtime's broadcast (taskgrid-broadcast-check).
//
//   taskgrid-broadcast-check --rounds N --seed S [--only R] [--hang-seconds T] [--verbose]
//
// Works in both modes (TASKGRID_MODE=cluster|spmd) under every broadcast
// strategy (TASKGRID_BCAST); tests/runtime/check_broadcast_run.py runs it and
// checks from TASKGRID_STATS that the strategy really ran.
//
// A seeded generator (the same on every rank; each round has its own seed
// derived from S and the round) builds rounds. A round has a handle B whose
// size cycles through 0, 1, 7, 4099, 64 KiB + 13, 1 MiB + 5 and random sizes;
// a producer task on a root rank (rank hint; any rank, not only 0) fills it,
// or it is read as entered; then reader tasks on a random set of ranks read
// it (all other ranks, a subset, one rank, sets that include the root, some
// ranks with two readers). In the same planning window: often a second
// broadcast (handle C: another root, another reader set: in mpi mode another
// member set, hence another communicator), a ring of small tokens (rank i
// writes one < 1 KiB, a task on rank i+1 reads it), readers of B and C in one
// task, and rewrites of B (inout) followed by readers of the new version.
//
// Every version's bytes are a pattern of (seed, round, handle, generation,
// byte index), so every reader verifies EVERY byte of what it got and throws
// on the first difference, naming round, rank, handle, offset, expected and
// found byte (a throwing task ends the job with a non-zero status). Each
// reader writes a result (magic, digest of its inputs, its rank) to its own
// handle; the program fetches every result and checks it too (cluster: rank
// 0; spmd: the result's owner, which is rank 0 or the reader's rank).
// Results are fetched after each round or up to two rounds later, so
// broadcasts of several rounds are also in flight together.
//
// Pass: exit status 0 and, on rank 0, "broadcast-check: N rounds verified"
// (in spmd mode rank 0 first gathers every rank's verdict through a task).
// --only R runs round R alone (the same plan as in the full run: each round
// has its own seed), --verbose prints each round's plan (what a bug report
// needs). A watchdog aborts the job, naming the round and operation, when
// nothing progresses for T seconds (default 30).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <taskgrid/taskgrid.hpp>
#include <thread>
#include <type_traits>
#include <vector>

#include "program_args.h"
#include "progress_watchdog.h"

namespace {

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// ------------------------------------------------------------- contents ----

// Word w (bytes 8w .. 8w+7) of the content named `key`.
uint64_t pattern_word(uint64_t key, size_t word) {
  return mix64(key ^ (static_cast<uint64_t>(word) * 0xd1b54a32d192ed03ULL));
}

uint8_t pattern_byte(uint64_t key, size_t offset) {
  return static_cast<uint8_t>(pattern_word(key, offset / 8) >> (8 * (offset % 8)));
}

void fill_pattern(uint8_t* out, size_t bytes, uint64_t key) {
  for (size_t offset = 0; offset < bytes; offset += 8) {
    const uint64_t word = pattern_word(key, offset / 8);
    const size_t n = std::min<size_t>(8, bytes - offset);
    for (size_t b = 0; b < n; ++b) out[offset + b] = static_cast<uint8_t>(word >> (8 * b));
  }
}

// The first offset at which `data` differs from the pattern, or `bytes`.
size_t first_difference(const uint8_t* data, size_t bytes, uint64_t key) {
  for (size_t offset = 0; offset < bytes; offset += 8) {
    const uint64_t word = pattern_word(key, offset / 8);
    const size_t n = std::min<size_t>(8, bytes - offset);
    for (size_t b = 0; b < n; ++b)
      if (data[offset + b] != static_cast<uint8_t>(word >> (8 * b))) return offset + b;
  }
  return bytes;
}

uint64_t fnv1a(const uint8_t* data, size_t bytes) {
  uint64_t hash = 14695981039346656037ULL;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ data[i]) * 1099511628211ULL;
  return hash;
}

// What a version holds: its pattern key and size, and which handle and
// generation it is (for messages).
struct Content {
  uint64_t key = 0;
  uint64_t bytes = 0;
  uint32_t handle = 0;      // in its round: 0 = B, 1 = C, 2 + i = ring token i
  uint32_t generation = 0;  // 0: as entered; each write adds one
};
static_assert(sizeof(Content) == 24);

std::string handle_name(uint32_t handle) {
  if (handle == 0) return "B";
  if (handle == 1) return "C";
  return "token" + std::to_string(handle - 2);
}

std::string describe(const Content& c) {
  return handle_name(c.handle) + " gen " + std::to_string(c.generation) + " (" +
         std::to_string(c.bytes) + " bytes)";
}

// Digest of a reader's inputs, as the reader computes it and as the program
// expects it.
uint64_t fold_digest(uint64_t digest, uint64_t input_hash, uint64_t bytes) {
  return mix64(digest ^ input_hash ^ (bytes * 0x9e3779b97f4a7c15ULL));
}

// ------------------------------------------------------- task functions ----

constexpr uint32_t kMaxInputs = 2;
constexpr uint64_t kResultMagic = 0x42434153545f4f4bULL;  // "BCAST_OK"

struct ReadArgs {
  uint32_t round;
  int32_t rank;  // the rank hint: where the task must run
  uint32_t reader;
  uint32_t count;
  Content inputs[kMaxInputs];
};
static_assert(std::is_trivially_copyable_v<ReadArgs>);

struct WriteArgs {
  uint32_t round;
  int32_t rank;
  uint32_t inout;  // 1: verify `before` (the version it reads), then write `after`
  uint32_t reserved;
  Content before;
  Content after;
};
static_assert(std::is_trivially_copyable_v<WriteArgs>);

// A reader's output (one handle per reader).
struct Result {
  uint64_t magic;
  uint64_t digest;
  uint32_t round;
  uint32_t reader;
  int32_t rank;  // where the task ran
  uint32_t inputs;
};
static_assert(sizeof(Result) == 32);

[[noreturn]] void task_failure(uint32_t round, int rank, const std::string& what) {
  throw std::runtime_error("broadcast-check: MISMATCH: round " + std::to_string(round) + ", rank " +
                           std::to_string(rank) + ": " + what);
}

void check_placement(const taskgrid::TaskContext& ctx, uint32_t round, int32_t hint) {
  if (ctx.rank() != hint)
    task_failure(round, ctx.rank(), "task placed here, its rank hint was " + std::to_string(hint));
}

// Checks every byte of access `index` against `c`.
void verify_access(const taskgrid::TaskContext& ctx, size_t index, const Content& c,
                   uint32_t round) {
  if (ctx.size(index) != c.bytes)
    task_failure(round, ctx.rank(),
                 describe(c) + " arrived with " + std::to_string(ctx.size(index)) + " bytes");
  if (c.bytes == 0) return;
  const auto* data = static_cast<const uint8_t*>(ctx.data(index));
  if (!data) task_failure(round, ctx.rank(), describe(c) + " has no buffer");
  const size_t at = first_difference(data, c.bytes, c.key);
  if (at == c.bytes) return;
  char text[160];
  std::snprintf(text, sizeof text, ": offset %zu: expected 0x%02x, found 0x%02x", at,
                pattern_byte(c.key, at), data[at]);
  task_failure(round, ctx.rank(), describe(c) + text);
}

// Reads `count` inputs, verifies every byte, writes a Result (last access).
void bc_read(taskgrid::TaskContext& ctx) {
  const auto args = ctx.arg<ReadArgs>();
  if (args.count == 0 || args.count > kMaxInputs || ctx.num_data() != args.count + 1)
    task_failure(args.round, ctx.rank(),
                 "bc_read got " + std::to_string(ctx.num_data()) + " accesses for " +
                     std::to_string(args.count) + " inputs");
  check_placement(ctx, args.round, args.rank);
  uint64_t digest = 0;
  for (uint32_t i = 0; i < args.count; ++i) {
    verify_access(ctx, i, args.inputs[i], args.round);
    digest = fold_digest(digest, fnv1a(static_cast<const uint8_t*>(ctx.data(i)), ctx.size(i)),
                         ctx.size(i));
  }
  if (ctx.size(args.count) != sizeof(Result))
    task_failure(args.round, ctx.rank(), "the result buffer has the wrong size");
  const Result result{kResultMagic, digest, args.round, args.reader, ctx.rank(), args.count};
  std::memcpy(ctx.data(args.count), &result, sizeof result);
}

// Producer (out) or rewrite (inout: the current version is verified first).
void bc_write(taskgrid::TaskContext& ctx) {
  const auto args = ctx.arg<WriteArgs>();
  if (ctx.num_data() != 1) task_failure(args.round, ctx.rank(), "bc_write needs one access");
  check_placement(ctx, args.round, args.rank);
  if (args.inout) verify_access(ctx, 0, args.before, args.round);
  if (ctx.size(0) != args.after.bytes)
    task_failure(args.round, ctx.rank(), describe(args.after) + " got a buffer of the wrong size");
  if (args.after.bytes)
    fill_pattern(static_cast<uint8_t*>(ctx.data(0)), args.after.bytes, args.after.key);
}

// spmd: copies each rank's verdict byte (one handle per rank) into one buffer.
void bc_gather(taskgrid::TaskContext& ctx) {
  const size_t count = ctx.num_data() - 1;
  if (ctx.size(count) != count) throw std::runtime_error("bc_gather: wrong output size");
  auto* out = static_cast<uint8_t*>(ctx.data(count));
  for (size_t i = 0; i < count; ++i) out[i] = *static_cast<const uint8_t*>(ctx.data(i));
}

TASKGRID_REGISTER(bc_read);
TASKGRID_REGISTER(bc_write);
TASKGRID_REGISTER(bc_gather);

// ---------------------------------------------------------------- rounds ----

struct HandleSpec {
  size_t bytes = 0;
  int owner = 0;  // enter_data's owner (spmd: where the entered version starts)
  Content entered;
};

enum class OpKind { write, read, release };

struct Op {
  OpKind kind = OpKind::read;
  int rank = 0;                   // rank hint (write, read)
  std::vector<uint32_t> handles;  // indices into Round::handles; write, release: one; read: 1-2
  bool inout = false;             // write
  // Filled in submission order (generation numbers depend on it):
  Content before, after;          // write
  std::vector<Content> contents;  // read
  size_t result = 0;              // read: its result
};

struct ResultSpec {
  int rank = 0;   // the reader's rank
  int owner = 0;  // the result handle's owner (spmd: the rank that checks it)
  std::vector<Content> contents;
};

struct Round {
  uint32_t index = 0;
  std::vector<HandleSpec> handles;
  std::vector<Op> ops;
  std::vector<ResultSpec> results;
  std::string summary;
};

constexpr size_t kCycleSizes[] = {0, 1, 7, 4099, (size_t{64} << 10) + 13, (size_t{1} << 20) + 5};
constexpr size_t kCycle = sizeof(kCycleSizes) / sizeof(kCycleSizes[0]);

size_t random_size(std::mt19937_64& rng) {
  // Log-uniform up to 512 KiB, odd sizes included.
  const uint64_t bits = 1 + rng() % 19;
  return static_cast<size_t>(rng() % (uint64_t{1} << bits));
}

// The reader ranks of one version held (or produced) on `root`: all other
// ranks, a subset, one rank, sets with the root in them; some ranks twice.
std::vector<int> pick_readers(std::mt19937_64& rng, int ranks, int root) {
  std::vector<int> others;
  for (int r = 0; r < ranks; ++r)
    if (r != root) others.push_back(r);
  std::vector<int> readers;
  const uint64_t kind = others.empty() ? 4 : rng() % 6;
  switch (kind) {
    case 0:
    case 1:  // every other rank
      readers = others;
      break;
    case 2:  // a subset of the others
      for (int r : others)
        if (rng() % 2) readers.push_back(r);
      if (readers.empty()) readers.push_back(others[rng() % others.size()]);
      break;
    case 3:  // one other rank
      readers.push_back(others[rng() % others.size()]);
      break;
    case 4:  // the root and a subset of the others
      readers.push_back(root);
      for (int r : others)
        if (rng() % 2) readers.push_back(r);
      break;
    default:  // every rank, the root included
      for (int r = 0; r < ranks; ++r) readers.push_back(r);
      break;
  }
  const size_t distinct = readers.size();
  for (size_t i = 0; i < distinct; ++i)
    if (rng() % 4 == 0) readers.push_back(readers[i]);  // a second reader there
  std::shuffle(readers.begin(), readers.end(), rng);
  return readers;
}

std::vector<int> distinct_sorted(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string text = "{";
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i) text += ',';
    text += std::to_string(ranks[i]);
  }
  text += '}';
  return text;
}

uint64_t round_seed(uint64_t seed, uint32_t round) {
  return mix64(seed ^ mix64(static_cast<uint64_t>(round) + 0x243f6a8885a308d3ULL));
}

// The plan of round `index`: the same on every rank (a function of seed,
// round, ranks and mode only).
Round generate_round(uint64_t seed, uint32_t index, int ranks, bool spmd) {
  std::mt19937_64 rng(round_seed(seed, index));
  Round round;
  round.index = index;
  auto key = [&](uint32_t handle, uint32_t generation) {
    return mix64(round_seed(seed, index) ^ mix64((uint64_t{handle} << 32) | generation));
  };
  // `label`: 0 = B, 1 = C, 2 + i = ring token i (names in messages); the
  // returned index is the handle's place in round.handles.
  auto add_handle = [&](size_t bytes, uint32_t label) {
    HandleSpec h;
    h.bytes = bytes;
    h.owner = static_cast<int>(rng() % static_cast<uint64_t>(ranks));
    h.entered = Content{key(label, 0), bytes, label, 0};
    round.handles.push_back(h);
    return static_cast<uint32_t>(round.handles.size() - 1);
  };
  // Where a handle's entered version is: cluster mode, the head's; spmd, its owner's.
  auto home = [&](uint32_t handle) { return spmd ? round.handles[handle].owner : 0; };
  auto write = [&](uint32_t handle, int rank, bool inout) {
    Op op;
    op.kind = OpKind::write;
    op.rank = rank;
    op.handles = {handle};
    op.inout = inout;
    return op;
  };
  auto read = [&](std::vector<uint32_t> handles, int rank) {
    Op op;
    op.kind = OpKind::read;
    op.rank = rank;
    op.handles = std::move(handles);
    return op;
  };
  auto pick_rank = [&] { return static_cast<int>(rng() % static_cast<uint64_t>(ranks)); };
  // Operations per handle, in order; merged at random below.
  std::vector<std::vector<Op>> streams;
  std::string& s = round.summary;

  // B: rounds 0-5 of every 8 take the cycle's sizes, rounds 6 and 7 random sizes.
  const size_t b_bytes =
      index % (kCycle + 2) < kCycle ? kCycleSizes[index % (kCycle + 2)] : random_size(rng);
  const uint32_t b = add_handle(b_bytes, 0);
  const bool b_produced = rng() % 6 != 0;
  const int b_root = b_produced ? pick_rank() : home(b);
  std::vector<Op> b_ops;
  if (b_produced) b_ops.push_back(write(b, b_root, false));
  const std::vector<int> b_readers = pick_readers(rng, ranks, b_root);
  for (int r : b_readers) b_ops.push_back(read({b}, r));
  s += "B " + std::to_string(b_bytes) + " bytes " + (b_produced ? "produced" : "entered") + " on " +
       std::to_string(b_root) + " read on " + ranks_text(b_readers);

  // C: a second broadcast, other root, other reader set.
  const bool has_c = rng() % 4 != 0;
  if (has_c) {
    const size_t c_bytes = rng() % 2 ? kCycleSizes[rng() % kCycle] : random_size(rng);
    const uint32_t c = add_handle(c_bytes, 1);
    const int c_root =
        ranks > 1
            ? (b_root + 1 + static_cast<int>(rng() % static_cast<uint64_t>(ranks - 1))) % ranks
            : 0;
    std::vector<int> c_readers = pick_readers(rng, ranks, c_root);
    for (int attempt = 0;
         attempt < 8 && ranks > 2 && distinct_sorted(c_readers) == distinct_sorted(b_readers);
         ++attempt)
      c_readers = pick_readers(rng, ranks, c_root);
    std::vector<Op> c_ops{write(c, c_root, false)};
    for (int r : c_readers) c_ops.push_back(read({c}, r));
    streams.push_back(std::move(c_ops));
    s += "; C " + std::to_string(c_bytes) + " bytes produced on " + std::to_string(c_root) +
         " read on " + ranks_text(c_readers);
    // Tasks that wait for both broadcasts (C as it is when they are submitted).
    if (rng() % 3 == 0) {
      const int rank = pick_rank();
      b_ops.push_back(read({b, c}, rank));
      s += "; B+C read on " + std::to_string(rank);
    }
  }

  // Rewrites of B (mostly on its root), each read by a new reader set.
  const uint64_t rewrites = rng() % 3 == 0 ? 1 + rng() % 2 : 0;
  for (uint64_t w = 0; w < rewrites; ++w) {
    const int rank = rng() % 4 ? b_root : pick_rank();
    b_ops.push_back(write(b, rank, true));
    const std::vector<int> readers = pick_readers(rng, ranks, rank);
    for (int r : readers) b_ops.push_back(read({b}, r));
    s += "; B rewritten on " + std::to_string(rank) + " read on " + ranks_text(readers);
  }
  // Released as soon as its tasks are submitted (its group is delivered then).
  if (rng() % 4 == 0) {
    Op op;
    op.kind = OpKind::release;
    op.handles = {b};
    b_ops.push_back(op);
    s += "; B released early";
  }
  streams.push_back(std::move(b_ops));

  // A ring of small point-to-point transfers in the same window.
  if (ranks > 1 && rng() % 3 != 0) {
    for (int r = 0; r < ranks; ++r) {
      const uint32_t token =
          add_handle(1 + static_cast<size_t>(rng() % 1000), 2 + static_cast<uint32_t>(r));
      streams.push_back({write(token, r, false), read({token}, (r + 1) % ranks)});
    }
    s += "; ring of " + std::to_string(ranks) + " tokens";
  }

  // Merge the streams at random (each stream keeps its order), then resolve
  // which version every access names.
  std::vector<size_t> next(streams.size(), 0);
  std::vector<Content> current;
  for (const HandleSpec& h : round.handles) current.push_back(h.entered);
  for (;;) {
    std::vector<size_t> open;
    for (size_t i = 0; i < streams.size(); ++i)
      if (next[i] < streams[i].size()) open.push_back(i);
    if (open.empty()) break;
    const size_t pick = open[rng() % open.size()];
    Op op = streams[pick][next[pick]++];
    if (op.kind == OpKind::write) {
      Content& c = current[op.handles[0]];
      op.before = c;
      c.generation += 1;
      c.key = key(c.handle, c.generation);
      op.after = c;
    } else if (op.kind == OpKind::read) {
      for (uint32_t h : op.handles) op.contents.push_back(current[h]);
      ResultSpec result;
      result.rank = op.rank;
      result.owner = rng() % 2 ? op.rank : 0;
      result.contents = op.contents;
      op.result = round.results.size();
      round.results.push_back(result);
    }
    round.ops.push_back(std::move(op));
  }
  return round;
}

void print_round(const Round& round) {
  std::printf("round %u: %s\n", round.index, round.summary.c_str());
  for (size_t i = 0; i < round.handles.size(); ++i)
    std::printf("  %s: %zu bytes, owner %d\n", handle_name(round.handles[i].entered.handle).c_str(),
                round.handles[i].bytes, round.handles[i].owner);
  for (size_t i = 0; i < round.ops.size(); ++i) {
    const Op& op = round.ops[i];
    if (op.kind == OpKind::write) {
      std::printf("  op %zu: write %s %s -> gen %u on rank %d\n", i, op.inout ? "inout" : "out",
                  describe(op.before).c_str(), op.after.generation, op.rank);
    } else if (op.kind == OpKind::read) {
      std::string what;
      for (const Content& c : op.contents) {
        if (!what.empty()) what += " + ";
        what += describe(c);
      }
      std::printf("  op %zu: read %s on rank %d -> result %zu (owner %d)\n", i, what.c_str(),
                  op.rank, op.result, round.results[op.result].owner);
    } else {
      std::printf("  op %zu: release %s\n", i,
                  handle_name(round.handles[op.handles[0]].entered.handle).c_str());
    }
  }
  std::fflush(stdout);
}

// ----------------------------------------------------------------- driver ----

struct Options {
  uint32_t rounds = 0;
  uint64_t seed = 0;
  long only = -1;
  int hang_seconds = 30;
  bool verbose = false;
};

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(stderr,
               "taskgrid-broadcast-check: %s\n"
               "usage: taskgrid-broadcast-check --rounds N --seed S [--only R] "
               "[--hang-seconds T] [--verbose]\n",
               problem.c_str());
  std::exit(2);
}

uint64_t parse_number(const char* text, const std::string& flag, uint64_t min, uint64_t max) {
  std::string problem;
  const auto value = taskgrid::testing::parse_whole_number(text, flag, min, max, problem);
  if (!value) usage(problem);
  return *value;
}

Options parse(int argc, char** argv) {
  Options o;
  bool have_rounds = false, have_seed = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--rounds") {
      o.rounds = static_cast<uint32_t>(parse_number(value(), flag, 1, 1'000'000));
      have_rounds = true;
    } else if (flag == "--seed") {
      o.seed = parse_number(value(), flag, 0, UINT64_MAX);
      have_seed = true;
    } else if (flag == "--only") {
      o.only = static_cast<long>(parse_number(value(), flag, 0, 1'000'000));
    } else if (flag == "--hang-seconds") {
      o.hang_seconds = static_cast<int>(parse_number(value(), flag, 1, 86'400));
    } else if (flag == "--verbose") {
      o.verbose = true;
    } else {
      usage("unknown argument \"" + flag + "\"");
    }
  }
  if (!have_rounds || !have_seed) usage("--rounds and --seed are required");
  if (o.only >= o.rounds) usage("--only R needs R < --rounds N");
  return o;
}

// A round whose tasks were submitted; its buffers stay put until checked.
struct LiveRound {
  Round plan;
  std::vector<std::vector<uint8_t>> host;
  std::vector<taskgrid::DataHandle> handles;
  std::vector<bool> released;
  std::vector<Result> results;  // the result handles' host buffers (never resized)
  std::vector<taskgrid::DataHandle> result_handles;
};

struct Counts {
  size_t reads = 0;
  size_t writes = 0;
  size_t results_checked = 0;
  uint64_t bytes_read = 0;
};

class Checker {
 public:
  Checker(int rank, bool spmd, taskgrid::testing::ProgressWatchdog& watchdog, std::string context)
      : rank_(rank), spmd_(spmd), watchdog_(watchdog), context_(std::move(context)) {}

  void submit(LiveRound& live) {
    const Round& plan = live.plan;
    const std::string where = "round " + std::to_string(plan.index);
    watchdog_.progress(context_ + ": " + where + " enter_data");
    live.host.resize(plan.handles.size());
    live.released.assign(plan.handles.size(), false);
    for (const HandleSpec& h : plan.handles) {
      std::vector<uint8_t>& host = live.host[live.handles.size()];
      host.assign(h.bytes, 0);
      // Only the rank whose buffer enter_data copies needs the pattern.
      if (!spmd_ || h.owner == rank_) fill_pattern(host.data(), h.bytes, h.entered.key);
      live.handles.push_back(taskgrid::enter_data(host.data(), h.bytes, h.owner));
    }
    live.results.assign(plan.results.size(), Result{});
    for (size_t i = 0; i < plan.results.size(); ++i)
      live.result_handles.push_back(
          taskgrid::enter_data(&live.results[i], sizeof(Result), plan.results[i].owner));

    for (size_t i = 0; i < plan.ops.size(); ++i) {
      const Op& op = plan.ops[i];
      watchdog_.progress(context_ + ": " + where + " op " + std::to_string(i));
      taskgrid::TaskOptions task_options;
      task_options.rank = op.rank;
      if (op.kind == OpKind::write) {
        const WriteArgs args{plan.index, op.rank, op.inout ? 1u : 0u, 0, op.before, op.after};
        const taskgrid::DataHandle h = live.handles[op.handles[0]];
        taskgrid::submit(bc_write, {op.inout ? taskgrid::inout(h) : taskgrid::out(h)}, task_options,
                         args);
        counts_.writes += 1;
      } else if (op.kind == OpKind::read) {
        ReadArgs args{};
        args.round = plan.index;
        args.rank = op.rank;
        args.reader = static_cast<uint32_t>(op.result);
        args.count = static_cast<uint32_t>(op.contents.size());
        std::vector<taskgrid::DataAccess> accesses;
        for (size_t k = 0; k < op.contents.size(); ++k) {
          args.inputs[k] = op.contents[k];
          accesses.push_back(taskgrid::in(live.handles[op.handles[k]]));
          counts_.bytes_read += op.contents[k].bytes;
        }
        accesses.push_back(taskgrid::out(live.result_handles[op.result]));
        taskgrid::submit_packed(taskgrid::function_id(bc_read), accesses.data(), accesses.size(),
                                task_options, &args, sizeof args);
        counts_.reads += 1;
      } else {
        taskgrid::release(live.handles[op.handles[0]]);
        live.released[op.handles[0]] = true;
      }
    }
  }

  // Fetches and checks every result of the round, then releases its handles.
  // Returns false on the first wrong result (after printing it).
  bool check(LiveRound& live) {
    const Round& plan = live.plan;
    bool ok = true;
    for (size_t i = 0; i < plan.results.size(); ++i) {
      const ResultSpec& spec = plan.results[i];
      watchdog_.progress(context_ + ": round " + std::to_string(plan.index) + " fetch result " +
                         std::to_string(i));
      // Every rank makes the same calls (spmd); exit_data for some, fetch +
      // release for others.
      const bool exit_now = (plan.index + i) % 3 == 0;
      if (exit_now)
        taskgrid::exit_data(live.result_handles[i]);
      else
        taskgrid::fetch(live.result_handles[i]);
      if (ok && (!spmd_ || spec.owner == rank_)) ok = check_result(plan, i, live.results[i]);
      if (!exit_now) taskgrid::release(live.result_handles[i]);
    }
    for (size_t h = 0; h < live.handles.size(); ++h)
      if (!live.released[h]) taskgrid::release(live.handles[h]);
    return ok;
  }

  const Counts& counts() const { return counts_; }

 private:
  uint64_t content_hash(const Content& c) {
    auto it = hashes_.find(c.key);
    if (it != hashes_.end()) return it->second;
    scratch_.resize(c.bytes);
    fill_pattern(scratch_.data(), c.bytes, c.key);
    const uint64_t hash = fnv1a(scratch_.data(), c.bytes);
    hashes_.emplace(c.key, hash);
    return hash;
  }

  bool check_result(const Round& plan, size_t i, const Result& got) {
    const ResultSpec& spec = plan.results[i];
    uint64_t digest = 0;
    std::string what;
    for (const Content& c : spec.contents) {
      digest = fold_digest(digest, content_hash(c), c.bytes);
      if (!what.empty()) what += " + ";
      what += describe(c);
    }
    std::string problem;
    if (got.magic != kResultMagic)
      problem = "no result (magic " + std::to_string(got.magic) + "): the reader did not run";
    else if (got.round != plan.index || got.reader != i)
      problem = "result of round " + std::to_string(got.round) + " reader " +
                std::to_string(got.reader) + " in its place";
    else if (got.rank != spec.rank)
      problem = "the reader ran on rank " + std::to_string(got.rank);
    else if (got.inputs != spec.contents.size())
      problem = "the reader saw " + std::to_string(got.inputs) + " inputs";
    else if (got.digest != digest)
      problem = "digest " + std::to_string(got.digest) + ", expected " + std::to_string(digest);
    counts_.results_checked += 1;
    if (problem.empty()) return true;
    std::fprintf(stderr,
                 "broadcast-check: MISMATCH: round %u, result %zu (reader of %s on rank %d): %s\n",
                 plan.index, i, what.c_str(), spec.rank, problem.c_str());
    std::fflush(stderr);
    return false;
  }

  int rank_;
  bool spmd_;
  taskgrid::testing::ProgressWatchdog& watchdog_;
  std::string context_;
  Counts counts_;
  std::map<uint64_t, uint64_t> hashes_;
  std::vector<uint8_t> scratch_;
};

// spmd: every rank checked the results it owns. Rank 0 learns every rank's
// verdict (0: all its checks passed) through one task; other ranks get 0xff.
std::vector<uint8_t> gather_verdicts(int ranks, int rank, uint8_t mine) {
  std::vector<uint8_t> own(static_cast<size_t>(ranks), 0);
  std::vector<uint8_t> all(static_cast<size_t>(ranks), 0xff);
  own[static_cast<size_t>(rank)] = mine;
  std::vector<taskgrid::DataAccess> accesses;
  for (int r = 0; r < ranks; ++r)
    accesses.push_back(taskgrid::in(taskgrid::enter_data(&own[static_cast<size_t>(r)], 1, r)));
  const taskgrid::DataHandle gathered = taskgrid::enter_data(all.data(), all.size(), 0);
  accesses.push_back(taskgrid::out(gathered));
  taskgrid::TaskOptions on_head;
  on_head.rank = 0;
  taskgrid::submit_packed(taskgrid::function_id(bc_gather), accesses.data(), accesses.size(),
                          on_head, nullptr, 0);
  taskgrid::exit_data(gathered);
  for (size_t i = 0; i + 1 < accesses.size(); ++i) taskgrid::release(accesses[i].handle);
  return all;
}

std::string env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  // Cluster mode: ranks > 0 serve inside start() and exit there. spmd mode:
  // every rank generates and submits the same rounds.
  taskgrid::start(&argc, &argv, taskgrid::Mode::from_environment);
  const int ranks = taskgrid::num_ranks();
  const int rank = taskgrid::rank();
  const bool spmd = taskgrid::is_spmd();
  const std::string mode = spmd ? "spmd" : "cluster";
  const std::string strategy = env_or("TASKGRID_BCAST", "auto");
  const std::string context = "seed " + std::to_string(options.seed) + ", rounds " +
                              std::to_string(options.rounds) + ", mode " + mode + ", strategy " +
                              strategy + ", ranks " + std::to_string(ranks);

  int status = 0;
  uint32_t verified = 0;
  {
    taskgrid::testing::ProgressWatchdog watchdog(
        options.hang_seconds, "broadcast-check",
        " (--only <round> --verbose runs that round alone and prints its plan)");
    Checker checker(rank, spmd, watchdog, context);
    // When results are checked: after the round, or up to two rounds later.
    std::mt19937_64 schedule(mix64(options.seed ^ 0x5ca1ab1eULL));
    std::deque<LiveRound> pending;
    long failed_round = -1;
    bool crashed = false;
    try {
      const auto first = static_cast<uint32_t>(std::max(0L, options.only));
      const uint32_t last = options.only >= 0 ? first + 1 : options.rounds;
      for (uint32_t index = first; index < last; ++index) {
        pending.push_back(
            LiveRound{generate_round(options.seed, index, ranks, spmd), {}, {}, {}, {}, {}});
        if (options.verbose && rank == 0) print_round(pending.back().plan);
        checker.submit(pending.back());
        const size_t keep = index + 1 == last ? 0 : schedule() % 3;
        while (pending.size() > keep) {
          // spmd: every rank goes on with the same sequence after a failure.
          if (!checker.check(pending.front()) && status == 0) {
            status = 1;
            failed_round = static_cast<long>(pending.front().plan.index);
          }
          if (status == 0) verified += 1;
          pending.pop_front();
        }
        if (status != 0 && !spmd) break;
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "broadcast-check: ERROR: %s: %s\n", context.c_str(), e.what());
      status = 1;
      crashed = true;
    }
    if (status != 0) {
      const std::string only =
          failed_round >= 0 ? " --only " + std::to_string(failed_round) : std::string();
      std::fprintf(stderr,
                   "broadcast-check: FAILED on rank %d (%s%s); reproduce with: TASKGRID_MODE=%s "
                   "TASKGRID_BCAST=%s mpiexec -n %d taskgrid-broadcast-check --rounds %u "
                   "--seed %llu%s --verbose\n",
                   rank, context.c_str(),
                   failed_round >= 0
                       ? ("; first wrong result in round " + std::to_string(failed_round)).c_str()
                       : "",
                   mode.c_str(), strategy.c_str(), ranks, options.rounds,
                   static_cast<unsigned long long>(options.seed), only.c_str());
      std::fflush(stderr);
    }
    if (spmd && !crashed) {
      watchdog.progress(context + ": gathering every rank's verdict");
      const std::vector<uint8_t> verdicts =
          gather_verdicts(ranks, rank, static_cast<uint8_t>(status != 0));
      std::vector<int> failed;
      for (int r = 0; r < ranks; ++r)
        if (verdicts[static_cast<size_t>(r)] != 0) failed.push_back(r);
      if (rank == 0 && !failed.empty()) {
        std::fprintf(stderr, "broadcast-check: ranks %s found wrong results\n",
                     ranks_text(failed).c_str());
        status = 1;
      }
    }
    const Counts& counts = checker.counts();
    if (status == 0 && rank == 0) {
      std::printf(
          "broadcast-check: %u rounds verified (%zu reads, %zu writes, %llu bytes read, %zu "
          "results checked on rank 0; mode %s, strategy %s, ranks %d)\n",
          verified, counts.reads, counts.writes, static_cast<unsigned long long>(counts.bytes_read),
          counts.results_checked, mode.c_str(), strategy.c_str(), ranks);
      std::fflush(stdout);
    }
    watchdog.progress(context + ": finish()" +
                      (status == 0 ? " (every round verified; the job did not shut down)" : ""));
    taskgrid::finish(status);
  }
  return status;
}
