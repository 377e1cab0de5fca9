// comm/wire.h: batches of framed commands. Everything written must read back
// byte for byte, whatever the alignment; a cut batch must be refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "comm/wire.h"

namespace {

namespace wire = taskgrid::comm::wire;

wire::Access make_access(uint64_t in, uint64_t out, uint64_t bytes, int32_t source, int32_t tag,
                         uint8_t mode) {
  wire::Access a{};
  a.in_version = in;
  a.out_version = out;
  a.bytes = bytes;
  a.source = source;
  a.tag = tag;
  a.mode = mode;
  return a;
}

void expect_same(const wire::Access& got, const wire::Access& want, size_t index) {
  EXPECT_EQ(got.in_version, want.in_version) << "access " << index;
  EXPECT_EQ(got.out_version, want.out_version) << "access " << index;
  EXPECT_EQ(got.bytes, want.bytes) << "access " << index;
  EXPECT_EQ(got.source, want.source) << "access " << index;
  EXPECT_EQ(got.tag, want.tag) << "access " << index;
  EXPECT_EQ(got.mode, want.mode) << "access " << index;
}

// One batch with every command kind; the odd-length task arguments leave
// every later command unaligned.
struct Sample {
  wire::Task task{};
  std::vector<wire::Access> accesses;
  std::vector<char> args = {'a', 'b', 'c', 'd', 'e'};
  wire::Task empty_task{};
  wire::Send send{};
  wire::Retire retire{};
  wire::Create create{};
  wire::Fetch fetch{};
  std::vector<wire::Completed> completed;
  char buffer[16] = {};
  double host[4] = {};
  std::vector<size_t> boundaries;  // batch size after each command

  explicit Sample(wire::BatchWriter& w) {
    accesses = {make_access(11, 0, 800, -1, 0, 1), make_access(0, 12, 8, 3, 77, 2),
                make_access(13, 14, (uint64_t{1} << 40) + 3, 2, -5, 3)};
    task.task_id = 0x0123456789abcdefULL;
    task.completion_key = 0x00ff00ff00ff00ffULL;
    task.function = 0xdeadbeefu;
    task.num_accesses = static_cast<uint32_t>(accesses.size());
    task.args_bytes = static_cast<uint32_t>(args.size());
    w.add_task(task, accesses.data(), args.data());
    boundaries.push_back(w.size());

    empty_task.task_id = 2;
    empty_task.function = 9;
    w.add_task(empty_task, nullptr, nullptr);
    boundaries.push_back(w.size());

    send = wire::Send{12, 3, 77};
    w.add(wire::Kind::send, send);
    boundaries.push_back(w.size());

    retire = wire::Retire{11};
    w.add(wire::Kind::retire, retire);
    boundaries.push_back(w.size());

    create = wire::Create{21, sizeof buffer, buffer};
    w.add(wire::Kind::create, create);
    boundaries.push_back(w.size());

    fetch = wire::Fetch{21, -1, 0, host, sizeof host};
    w.add(wire::Kind::fetch, fetch);
    boundaries.push_back(w.size());

    completed = {wire::Completed{5, 1000, 1}, wire::Completed{6, 2000, 2},
                 wire::Completed{7, UINT64_MAX, 3}};
    // One record per command, as engines report them...
    w.add(wire::Kind::completed, completed[0]);
    boundaries.push_back(w.size());
    // ...and several records in one command.
    w.add(wire::Kind::completed, completed[1], &completed[2], sizeof(wire::Completed));
    boundaries.push_back(w.size());

    w.add(wire::Kind::shutdown, char{0});
    boundaries.push_back(w.size());
  }
};

TEST(Wire, WriterStartsEmptyAndClears) {
  wire::BatchWriter w;
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(w.size(), 0u);
  w.add(wire::Kind::retire, wire::Retire{1});
  EXPECT_FALSE(w.empty());
  EXPECT_EQ(w.size(), sizeof(wire::Header) + sizeof(wire::Retire));
  EXPECT_EQ(w.bytes().size(), w.size());
  w.clear();
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(w.size(), 0u);
}

TEST(Wire, EmptyBatchHasNoCommands) {
  wire::BatchReader reader(nullptr, 0);
  wire::Header header{};
  const char* payload = nullptr;
  EXPECT_FALSE(reader.next(header, payload));
}

TEST(Wire, EveryCommandKindRoundTrips) {
  wire::BatchWriter w;
  const Sample s(w);
  // Copy to a deliberately misaligned buffer: readers must not assume alignment.
  std::vector<char> storage(w.size() + 1);
  std::memcpy(storage.data() + 1, w.bytes().data(), w.size());
  wire::BatchReader reader(storage.data() + 1, w.size());

  wire::Header h{};
  const char* p = nullptr;

  ASSERT_TRUE(reader.next(h, p));
  EXPECT_EQ(h.kind, wire::Kind::task);
  ASSERT_EQ(h.bytes, sizeof(wire::Task) + 3 * sizeof(wire::Access) + 5);
  {
    const auto task = wire::read<wire::Task>(p);
    EXPECT_EQ(task.task_id, s.task.task_id);
    EXPECT_EQ(task.completion_key, s.task.completion_key);
    EXPECT_EQ(task.function, s.task.function);
    EXPECT_EQ(task.num_accesses, 3u);
    EXPECT_EQ(task.args_bytes, 5u);
    for (size_t i = 0; i < 3; ++i) {
      const auto a = wire::read<wire::Access>(p + sizeof(wire::Task) + i * sizeof(wire::Access));
      expect_same(a, s.accesses[i], i);
    }
    const char* args = p + sizeof(wire::Task) + 3 * sizeof(wire::Access);
    EXPECT_EQ(std::string(args, 5), "abcde");
  }

  ASSERT_TRUE(reader.next(h, p));
  EXPECT_EQ(h.kind, wire::Kind::task);
  ASSERT_EQ(h.bytes, sizeof(wire::Task));
  {
    const auto task = wire::read<wire::Task>(p);
    EXPECT_EQ(task.task_id, 2u);
    EXPECT_EQ(task.function, 9u);
    EXPECT_EQ(task.num_accesses, 0u);
    EXPECT_EQ(task.args_bytes, 0u);
  }

  ASSERT_TRUE(reader.next(h, p));
  EXPECT_EQ(h.kind, wire::Kind::send);
  ASSERT_EQ(h.bytes, sizeof(wire::Send));
  {
    const auto send = wire::read<wire::Send>(p);
    EXPECT_EQ(send.version, 12u);
    EXPECT_EQ(send.dest, 3);
    EXPECT_EQ(send.tag, 77);
  }

  ASSERT_TRUE(reader.next(h, p));
  EXPECT_EQ(h.kind, wire::Kind::retire);
  ASSERT_EQ(h.bytes, sizeof(wire::Retire));
  EXPECT_EQ(wire::read<wire::Retire>(p).version, 11u);

  ASSERT_TRUE(reader.next(h, p));
  EXPECT_EQ(h.kind, wire::Kind::create);
  ASSERT_EQ(h.bytes, sizeof(wire::Create));
  {
    const auto create = wire::read<wire::Create>(p);
    EXPECT_EQ(create.version, 21u);
    EXPECT_EQ(create.bytes, sizeof s.buffer);
    EXPECT_EQ(create.buffer, s.buffer);
  }

  ASSERT_TRUE(reader.next(h, p));
  EXPECT_EQ(h.kind, wire::Kind::fetch);
  ASSERT_EQ(h.bytes, sizeof(wire::Fetch));
  {
    const auto fetch = wire::read<wire::Fetch>(p);
    EXPECT_EQ(fetch.version, 21u);
    EXPECT_EQ(fetch.source, -1);
    EXPECT_EQ(fetch.tag, 0);
    EXPECT_EQ(fetch.host, static_cast<const void*>(s.host));
    EXPECT_EQ(fetch.bytes, sizeof s.host);
  }

  std::vector<wire::Completed> records;
  for (int command = 0; command < 2; ++command) {
    ASSERT_TRUE(reader.next(h, p));
    EXPECT_EQ(h.kind, wire::Kind::completed);
    ASSERT_EQ(h.bytes % sizeof(wire::Completed), 0u);
    for (size_t i = 0; i < h.bytes / sizeof(wire::Completed); ++i)
      records.push_back(wire::read<wire::Completed>(p + i * sizeof(wire::Completed)));
  }
  ASSERT_EQ(records.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(records[i].task_id, s.completed[i].task_id);
    EXPECT_EQ(records[i].duration_ns, s.completed[i].duration_ns);
    EXPECT_EQ(records[i].completion_key, s.completed[i].completion_key);
  }

  ASSERT_TRUE(reader.next(h, p));
  EXPECT_EQ(h.kind, wire::Kind::shutdown);

  EXPECT_FALSE(reader.next(h, p));
  EXPECT_FALSE(reader.next(h, p));  // stays at the end
}

TEST(Wire, PayloadsPointIntoTheBatch) {
  wire::BatchWriter w;
  const Sample s(w);
  const char* begin = w.bytes().data();
  wire::BatchReader reader(begin, w.size());
  wire::Header h{};
  const char* p = nullptr;
  size_t at = 0;
  for (size_t boundary : s.boundaries) {
    ASSERT_TRUE(reader.next(h, p));
    EXPECT_EQ(p, begin + at + sizeof(wire::Header));
    EXPECT_EQ(at + sizeof(wire::Header) + h.bytes, boundary);
    at = boundary;
  }
  EXPECT_FALSE(reader.next(h, p));
  EXPECT_EQ(at, w.size());
}

TEST(Wire, BatchesConcatenate) {
  // Two batches appended byte-wise read as one (what a receiver may see when
  // it merges buffers).
  wire::BatchWriter a;
  wire::BatchWriter b;
  a.add(wire::Kind::retire, wire::Retire{1});
  b.add(wire::Kind::retire, wire::Retire{2});
  std::vector<char> joined = a.bytes();
  joined.insert(joined.end(), b.bytes().begin(), b.bytes().end());
  wire::BatchReader reader(joined.data(), joined.size());
  wire::Header h{};
  const char* p = nullptr;
  ASSERT_TRUE(reader.next(h, p));
  EXPECT_EQ(wire::read<wire::Retire>(p).version, 1u);
  ASSERT_TRUE(reader.next(h, p));
  EXPECT_EQ(wire::read<wire::Retire>(p).version, 2u);
  EXPECT_FALSE(reader.next(h, p));
}

TEST(Wire, TruncatedBatchesStopAtTheCut) {
  wire::BatchWriter w;
  const Sample s(w);
  const std::set<size_t> boundaries(s.boundaries.begin(), s.boundaries.end());
  for (size_t cut = 1; cut < w.size(); ++cut) {
    // A fresh copy of exactly `cut` bytes, so that reading past it is caught
    // by sanitizers too.
    std::vector<char> prefix(w.bytes().begin(), w.bytes().begin() + static_cast<long>(cut));
    wire::BatchReader reader(prefix.data(), prefix.size());
    wire::Header h{};
    const char* p = nullptr;
    size_t whole = 0;
    while (reader.next(h, p)) ++whole;
    EXPECT_FALSE(reader.next(h, p)) << "a cut batch stays cut";
    if (boundaries.count(cut)) {
      EXPECT_EQ(reader.cut(), nullptr) << "cut at a command boundary " << cut;
    } else {
      EXPECT_NE(reader.cut(), nullptr) << "cut at byte " << cut << " of " << w.size() << " read "
                                       << whole << " commands without error";
    }
    // Commands wholly before the cut are still delivered.
    size_t expected_whole = 0;
    for (size_t b : s.boundaries)
      if (b <= cut) ++expected_whole;
    EXPECT_EQ(whole, expected_whole) << "cut " << cut;
  }
}

TEST(Wire, HeaderCountingMoreThanTheBatchIsCut) {
  wire::BatchWriter w;
  w.add(wire::Kind::retire, wire::Retire{1});
  wire::Header forged{};
  std::memcpy(&forged, w.bytes().data(), sizeof forged);
  forged.bytes = 0xffffffffu;
  std::memcpy(w.bytes().data(), &forged, sizeof forged);
  wire::BatchReader reader(w.bytes().data(), w.size());
  wire::Header h{};
  const char* p = nullptr;
  EXPECT_FALSE(reader.next(h, p));
  ASSERT_NE(reader.cut(), nullptr);
  EXPECT_EQ(h.kind, wire::Kind::retire) << "the cut command's kind is known, for the message";
  EXPECT_EQ(reader.offset(), 0u);
}

}  // namespace
