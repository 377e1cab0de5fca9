// comm/wire_check.h: which batches an engine may apply. The fuzz target's
// seed corpus (fuzz/corpus/batch, written by fuzz/make_corpus.py) is replayed
// here with the normal build: bad-* inputs (the malformed batches of issue
// 14) must be refused, ok-* accepted, and anything else (inputs the fuzzer
// found) only must not crash.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "comm/wire.h"
#include "comm/wire_check.h"
#include "fuzz/batch_decoder.h"

namespace {

namespace wire = taskgrid::comm::wire;
namespace fs = std::filesystem;

std::vector<uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(WireCheck, ReplaysTheFuzzCorpus) {
  const fs::path corpus = TASKGRID_FUZZ_CORPUS;
  size_t bad = 0, ok = 0;
  for (const auto& entry : fs::directory_iterator(corpus)) {
    const std::string name = entry.path().filename().string();
    const std::vector<uint8_t> input = read_file(entry.path());
    const bool accepted = taskgrid::fuzz::decode_input(input.data(), input.size());
    if (name.rfind("bad-", 0) == 0) {
      EXPECT_FALSE(accepted) << name;
      ++bad;
    } else if (name.rfind("ok-", 0) == 0) {
      EXPECT_TRUE(accepted) << name;
      ++ok;
    }
  }
  EXPECT_GE(bad, 30u) << "the corpus lost its regression inputs (" << corpus << ")";
  EXPECT_GE(ok, 5u);
}

// Every prefix of a well-formed batch that ends inside a command is refused,
// and the rejection names that command's kind and where it starts.
TEST(WireCheck, EveryCutOfAWellFormedBatchIsRefused) {
  wire::BatchWriter w;
  w.reserve(256);  // also keeps GCC 12 from a false -Wstringop-overflow on the growth path
  wire::Task task{};
  task.num_accesses = 1;
  task.args_bytes = 3;
  task.name_bytes = 4;
  task.channel = -1;
  wire::Access access{};
  access.out_version = 3;
  access.bytes = 16;
  access.source = -1;
  w.add_task(task, &access, "abc", "name");
  const size_t task_end = w.size();
  w.add(wire::Kind::retire, wire::Retire{3});
  const wire::Peer local{0, 2, 0, 0};
  ASSERT_FALSE(wire::check_batch(w.bytes().data(), w.size(), local));
  for (size_t cut = 1; cut < w.size(); ++cut) {
    if (cut == task_end) continue;
    const std::vector<char> prefix(w.bytes().begin(), w.bytes().begin() + static_cast<long>(cut));
    const wire::Rejection r = wire::check_batch(prefix.data(), prefix.size(), local);
    ASSERT_TRUE(r) << "cut at " << cut;
    EXPECT_EQ(r.kind, static_cast<uint8_t>(cut < task_end ? wire::Kind::task : wire::Kind::retire))
        << "cut at " << cut;
    EXPECT_EQ(r.offset, cut < task_end ? 0u : task_end) << "cut at " << cut;
  }
}

// Checked mode's argument types are the last signature_bytes of the
// arguments: never more than the arguments.
TEST(WireCheck, ArgumentTypesFitInTheArguments) {
  wire::Task task{};
  task.args_bytes = 8;
  task.channel = -1;
  const wire::Peer local{0, 2, 0, 0};
  for (uint32_t types : {0u, 8u, 9u}) {
    task.signature_bytes = types;
    wire::BatchWriter w;
    w.add_task(task, nullptr, "12345678");
    const wire::Rejection r = wire::check_batch(w.bytes().data(), w.size(), local);
    EXPECT_EQ(static_cast<bool>(r), types > 8) << types;
    if (r) {
      EXPECT_STREQ(r.reason, "argument types longer than its arguments");
    }
  }
}

// An access may retire its input only where it reads and writes it (an
// inout), and carries no flag the engine does not know.
TEST(WireCheck, AnAccessRetiresOnlyAnInputItAlsoWrites) {
  wire::Task task{};
  task.num_accesses = 1;
  task.channel = -1;
  const wire::Peer local{0, 2, 0, 0};
  struct Case {
    uint64_t in, out;
    uint8_t flags;
    const char* reason;  // nullptr: accepted
  };
  for (const Case& c : {Case{4, 5, wire::kRetiresInput, nullptr}, Case{4, 5, 0, nullptr},
                        Case{0, 5, wire::kRetiresInput,
                             "an access that retires its input without reading and writing"},
                        Case{4, 0, wire::kRetiresInput,
                             "an access that retires its input without reading and writing"},
                        Case{4, 5, 2, "an access with unknown flags"}}) {
    wire::Access access{};
    access.in_version = c.in;
    access.out_version = c.out;
    access.bytes = 8;
    access.source = -1;
    access.flags = c.flags;
    wire::BatchWriter w;
    w.add_task(task, &access, "");
    const wire::Rejection r = wire::check_batch(w.bytes().data(), w.size(), local);
    if (c.reason) {
      ASSERT_TRUE(r) << c.in << " " << c.out << " " << int{c.flags};
      EXPECT_STREQ(r.reason, c.reason);
    } else {
      EXPECT_FALSE(r) << c.in << " " << c.out << " " << int{c.flags} << ": " << r.reason;
    }
  }
}

TEST(WireCheck, LocalOnlyCommandsComeOnlyFromThisRank) {
  char buffer[8] = {};
  wire::BatchWriter w;
  w.add(wire::Kind::create, wire::Create{5, sizeof buffer, buffer});
  w.add(wire::Kind::fetch, wire::Fetch{5, -1, 0, buffer, sizeof buffer});
  w.add(wire::Kind::local_task, wire::LocalTask{buffer});
  EXPECT_FALSE(wire::check_batch(w.bytes().data(), w.size(), {1, 4, 0, 1}))
      << "a batch this rank posted";
  const wire::Rejection from_head = wire::check_batch(w.bytes().data(), w.size(), {1, 4, 0, 0});
  ASSERT_TRUE(from_head) << "the head plans rank 1's tasks, but its pointers mean nothing here";
  EXPECT_EQ(from_head.kind, static_cast<uint8_t>(wire::Kind::create));
}

TEST(WireCheck, ALocalTaskIsOneRecordFromThisRank) {
  char record[8] = {};
  wire::BatchWriter w;
  w.add(wire::Kind::local_task, wire::LocalTask{record});
  EXPECT_FALSE(wire::check_batch(w.bytes().data(), w.size(), {1, 4, 0, 1}));
  const wire::Rejection from_head = wire::check_batch(w.bytes().data(), w.size(), {1, 4, 0, 0});
  ASSERT_TRUE(from_head) << "a record's address means nothing in another process";
  EXPECT_EQ(from_head.kind, static_cast<uint8_t>(wire::Kind::local_task));

  wire::BatchWriter null_record;
  null_record.add(wire::Kind::local_task, wire::LocalTask{nullptr});
  EXPECT_TRUE(wire::check_batch(null_record.bytes().data(), null_record.size(), {1, 4, 0, 1}));
  wire::BatchWriter short_payload;
  short_payload.add(wire::Kind::local_task, char{1});
  EXPECT_TRUE(wire::check_batch(short_payload.bytes().data(), short_payload.size(), {1, 4, 0, 1}));
}

// The head plans every rank in cluster mode: its tasks, sends and
// retirements are accepted from it, not from a third rank.
TEST(WireCheck, PlannerCommandsComeFromThisRankOrTheHead) {
  wire::BatchWriter w;
  w.add(wire::Kind::send, wire::Send{5, 2, 1});
  w.add(wire::Kind::retire, wire::Retire{5});
  EXPECT_FALSE(wire::check_batch(w.bytes().data(), w.size(), {1, 4, 0, 0}));
  EXPECT_FALSE(wire::check_batch(w.bytes().data(), w.size(), {1, 4, 1, 1}));
  EXPECT_TRUE(wire::check_batch(w.bytes().data(), w.size(), {1, 4, 0, 2}));
}

TEST(WireCheck, DescribesTheCommandAndItsSender) {
  EXPECT_EQ(wire::describe(static_cast<uint8_t>(wire::Kind::send), 3, "why"),
            "protocol error: a send command from rank 3: why");
  EXPECT_EQ(wire::describe(42, 1, "why"),
            "protocol error: a command of unknown kind 42 from rank 1: why");
}

}  // namespace
