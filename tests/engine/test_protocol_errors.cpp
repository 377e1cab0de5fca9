// A control batch comes from another process, so an engine must refuse a
// malformed one through the job's failure path, naming the command and the
// rank it came from, and never read past it, crash or throw (issue 14, item
// 5). Each case runs a real Engine over the loopback transport in a death
// test: rank `at` of a 3-rank job whose head (planner) is rank 0. Batches
// an engine's own planner posts (source == at) are not checked field by
// field (they never leave the process); the cases posted locally here test
// what the engine checks against its own state.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "comm/loopback/transport.h"
#include "comm/wire.h"
#include "data/buffer_pool.h"
#include "engine/engine.h"
#include "taskgrid/taskgrid.hpp"

namespace taskgrid::engine {
namespace {

// Writes every byte of its outputs, so that a buffer smaller than the task
// was told is written past.
void protocol_task(TaskContext& ctx) {
  for (size_t i = 0; i < ctx.num_data(); ++i) std::memset(ctx.data(i), 0x5a, ctx.size(i));
}
TASKGRID_REGISTER(protocol_task);

constexpr int kRanks = 3;

using Batch = std::vector<char>;

template <typename T>
void put(Batch& out, const T& value) {
  // resize + memcpy: GCC 12 sees an overflow in vector::insert into an empty
  // vector at -O1 (-Wstringop-overflow, a false positive).
  const size_t at = out.size();
  out.resize(at + sizeof value);
  std::memcpy(out.data() + at, &value, sizeof value);
}

// A header that says `declared` payload bytes, then `body` (whatever its size).
Batch frame(uint8_t kind, uint32_t declared, const Batch& body) {
  Batch out;
  put(out, comm::wire::Header{static_cast<comm::wire::Kind>(kind), {}, declared});
  out.insert(out.end(), body.begin(), body.end());
  return out;
}
Batch frame(comm::wire::Kind kind, const Batch& body) {
  return frame(static_cast<uint8_t>(kind), static_cast<uint32_t>(body.size()), body);
}
template <typename T>
Batch body_of(const T& value) {
  Batch out;
  put(out, value);
  return out;
}
Batch join(Batch a, const Batch& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

comm::wire::Task task_fields(uint32_t accesses, uint32_t args = 0, uint32_t name = 0) {
  comm::wire::Task task{};
  task.task_id = 77;
  task.function = function_id(protocol_task).value;
  task.num_accesses = accesses;
  task.args_bytes = args;
  task.name_bytes = name;
  task.channel = -1;
  return task;
}

comm::wire::Access access(uint64_t in, uint64_t out, uint64_t bytes, int32_t source = -1,
                          int32_t tag = 0) {
  const AccessMode mode = in && out ? AccessMode::inout : in ? AccessMode::in : AccessMode::out;
  return comm::wire::Access{in, out, bytes, source, tag, static_cast<uint8_t>(mode), 0, {}};
}

// A task command with its accesses and args, sized as the fields say.
Batch task_command(const comm::wire::Task& task, const std::vector<comm::wire::Access>& accesses,
                   const Batch& rest = {}) {
  Batch body = body_of(task);
  for (const comm::wire::Access& a : accesses) put(body, a);
  body.insert(body.end(), rest.begin(), rest.end());
  return frame(comm::wire::Kind::task, body);
}

// A local create of `version` with a buffer of `bytes` (freed by the engine).
Batch create_command(uint64_t version, uint64_t bytes) {
  char* buffer = data::allocate_buffer(bytes);
  std::memset(buffer, 0, bytes);
  return frame(comm::wire::Kind::create, body_of(comm::wire::Create{version, bytes, buffer}));
}

Batch route_command(comm::wire::Kind kind, uint64_t bytes, uint64_t chunk, uint32_t count,
                    const std::vector<int32_t>& ranks) {
  comm::wire::Route route{};
  route.version = 40;
  route.bytes = bytes;
  route.chunk_bytes = chunk;
  route.tag = 9;
  route.count = count;
  Batch body = body_of(route);
  for (int32_t r : ranks) put(body, r);
  return frame(kind, body);
}

// Applies `batches` ({source, batch}; from `at` itself: posted locally) on
// rank `at`, then the head's shutdown, and exits 0 if the engine stops. A
// hang (a receive posted for a lying command) ends by SIGALRM.
[[noreturn]] void run_engine(int at, std::vector<std::pair<int, Batch>> batches) {
  alarm(10);
  comm::loopback::LoopbackFabric fabric(kRanks);
  Engine engine(fabric.transport(at), 1, 0);
  engine.set_timing(false);
  for (auto& [source, batch] : batches) {
    if (source == at) {
      engine.post(at, std::move(batch));
    } else {
      fabric.transport(source).send_control(at, std::move(batch));
    }
  }
  Batch stop = frame(comm::wire::Kind::shutdown, Batch{0});
  if (at == 0) {
    engine.post(0, std::move(stop));
  } else {
    fabric.transport(0).send_control(at, std::move(stop));
  }
  engine.run();
  std::exit(0);
}

struct Case {
  const char* name;
  int at;  // the engine's rank
  std::function<std::vector<std::pair<int, Batch>>()> batches;
  const char* expected;  // a regex of the job's failure message
};

std::ostream& operator<<(std::ostream& out, const Case& c) { return out << c.name; }

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      // Batch framing.
      {"TruncatedHeader", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{{0, Batch{3, 0, 0, 0, 8}}};
       },
       "rank 1: protocol error: a retire command from rank 0: the batch ends inside a command "
       "header"},
      {"CommandPastTheBatch", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{
             {0, frame(3, 100, body_of(comm::wire::Retire{5}))}};
       },
       "rank 1: protocol error: a retire command from rank 0: the command runs past the end"},
      {"UnknownKind", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{{0, frame(99, 8, Batch(8, 0))}};
       },
       "rank 1: protocol error: a command of unknown kind 99 from rank 0: an unknown command "
       "kind"},
      // Task bodies.
      {"TaskShorterThanItsFields", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{{0, frame(1, 4, Batch(4, 1))}};
       },
       "rank 1: protocol error: a task command from rank 0: the payload is shorter"},
      {"TaskAccessesPastThePayload", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{
             {0, task_command(task_fields(1000), {access(0, 3, 8)})}};
       },
       "rank 1: protocol error: a task command from rank 0: its accesses, arguments and name"},
      {"TaskArgsPastThePayload", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{
             {0, task_command(task_fields(0, 1u << 20), {}, Batch{'a', 'b', 'c'})}};
       },
       "rank 1: protocol error: a task command from rank 0: its accesses, arguments and name"},
      {"TaskNamePastThePayload", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{
             {0, task_command(task_fields(0, 0, 0xffffffffu), {}, Batch{'n'})}};
       },
       "rank 1: protocol error: a task command from rank 0: its accesses, arguments and name"},
      {"TaskSizesThatWrapIn32Bits", 1,
       [] {
         // 0x06666667 accesses of 40 bytes: 0x100000018 bytes, 24 in 32 bits.
         return std::vector<std::pair<int, Batch>>{
             {0, task_command(task_fields(0x06666667u, 0xffffffe8u), {})}};
       },
       "rank 1: protocol error: a task command from rank 0: its accesses, arguments and name"},
      {"AccessWithNeitherVersion", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{
             {0, task_command(task_fields(1), {access(0, 0, 8)})}};
       },
       "rank 1: protocol error: a task command from rank 0: an access with neither an input nor "
       "an output version"},
      {"InputAndOutputSizesDiffer", 0,
       [] {
         return std::vector<std::pair<int, Batch>>{
             {0,
              join(create_command(5, 8), task_command(task_fields(1), {access(5, 6, 1u << 20)}))}};
       },
       "rank 0: protocol error: a task command from rank 0: task 77 reads version 5 as 1048576 "
       "bytes, it has 8"},
      {"HugeRemoteInput", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{
             {0, task_command(task_fields(1), {access(7, 0, uint64_t{1} << 62, 2, 3)})}};
       },
       "rank 1: protocol error: a task command from rank 0: an access larger than the largest "
       "version"},
      {"InputFromARankOutsideTheJob", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{
             {0, task_command(task_fields(1), {access(7, 0, 8, 9, 3)})}};
       },
       "rank 1: protocol error: a task command from rank 0: an input from a rank outside the "
       "job"},
      {"TaskFromARankThatDoesNotPlanHere", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{{2, task_command(task_fields(0), {})}};
       },
       "rank 1: protocol error: a task command from rank 2: tasks come only from this rank's "
       "planner"},
      // Fixed-size commands.
      {"ZeroPayloadSend", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{{0, frame(comm::wire::Kind::send, {})}};
       },
       "rank 1: protocol error: a send command from rank 0: the payload is not one send"},
      {"SendToARankOutsideTheJob", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{
             {0, frame(comm::wire::Kind::send, body_of(comm::wire::Send{5, 12, 1}))}};
       },
       "rank 1: protocol error: a send command from rank 0: a destination outside the job"},
      {"ShortRetire", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{{0, frame(comm::wire::Kind::retire, Batch(3))}};
       },
       "rank 1: protocol error: a retire command from rank 0: the payload is not one retirement"},
      {"FetchOfTheWrongSize", 0,
       [] {
         static std::vector<char> host(1u << 20);
         return std::vector<std::pair<int, Batch>>{
             {0, join(create_command(5, 8),
                      frame(comm::wire::Kind::fetch,
                            body_of(comm::wire::Fetch{5, -1, 0, host.data(), host.size()})))}};
       },
       "rank 0: protocol error: a fetch command from rank 0: a fetch of 1048576 bytes of version "
       "5, which has 8"},
      {"ShortCompleted", 0,
       [] {
         return std::vector<std::pair<int, Batch>>{
             {1, frame(comm::wire::Kind::completed, Batch(10))}};
       },
       "rank 0: protocol error: a completed command from rank 1: the payload is not a whole "
       "number"},
      {"CompletedToARankThatIsNotTheHead", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{
             {2, frame(comm::wire::Kind::completed, body_of(comm::wire::Completed{1, 0, 1}))}};
       },
       "rank 1: protocol error: a completed command from rank 2: completions sent to a rank that "
       "is not the head"},
      // Local-only commands from another rank.
      {"CreateFromAnotherRank", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{{0, create_command(5, 8)}};
       },
       "rank 1: protocol error: a create command from rank 0: a local-only command"},
      {"FetchFromAnotherRank", 1,
       [] {
         static char victim[8];
         return std::vector<std::pair<int, Batch>>{
             {0, frame(comm::wire::Kind::fetch,
                       body_of(comm::wire::Fetch{5, 2, 4, victim, sizeof victim}))}};
       },
       "rank 1: protocol error: a fetch command from rank 0: a local-only command"},
      // Broadcasts.
      {"ShortRoute", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{{2, frame(comm::wire::Kind::route, Batch(8))}};
       },
       "rank 1: protocol error: a route command from rank 2: the payload is shorter"},
      {"RouteListPastThePayload", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{
             {2, route_command(comm::wire::Kind::route, 64, 64, 1000, {0})}};
       },
       "rank 1: protocol error: a route command from rank 2: its rank count does not match"},
      {"RouteToARankOutsideTheJob", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{
             {2, route_command(comm::wire::Kind::route, 64, 64, 1, {7})}};
       },
       "rank 1: protocol error: a route command from rank 2: a rank outside the job"},
      {"HugeRoute", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{
             {2, route_command(comm::wire::Kind::route, uint64_t{1} << 60, 1, 0, {})}};
       },
       "rank 1: protocol error: a route command from rank 2: data larger than the largest "
       "version"},
      {"RouteOfMoreChunksThanCounted", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{
             {2, route_command(comm::wire::Kind::route, uint64_t{1} << 40, 1, 0, {})}};
       },
       "rank 1: protocol error: a route command from rank 2: more chunks than a broadcast can "
       "count"},
      {"ShortBroadcast", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{
             {0, frame(comm::wire::Kind::broadcast, Batch(39))}};
       },
       "rank 1: protocol error: a broadcast command from rank 0: the payload is shorter"},
      {"ShortMpiBroadcast", 1,
       [] {
         return std::vector<std::pair<int, Batch>>{
             {0, frame(comm::wire::Kind::mpi_broadcast, Batch(12))}};
       },
       "rank 1: protocol error: a mpi_broadcast command from rank 0: the payload is shorter"},
  };
  return all;
}

class ProtocolErrors : public ::testing::TestWithParam<Case> {};

TEST_P(ProtocolErrors, EndTheJobNamingTheCommandAndItsSender) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Case& c = GetParam();
  EXPECT_EXIT(run_engine(c.at, c.batches()), ::testing::ExitedWithCode(1), c.expected);
}

INSTANTIATE_TEST_SUITE_P(Batches, ProtocolErrors, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& param) {
                           return std::string(param.param.name);
                         });

// The harness is not vacuous: well-formed batches from the same senders are
// applied and the engine stops cleanly.
TEST(ProtocolErrors, WellFormedBatchesRunToTheEnd) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      run_engine(
          0, {{0, join(create_command(5, 64), task_command(task_fields(1), {access(5, 6, 64)}))},
              {1, frame(comm::wire::Kind::completed, body_of(comm::wire::Completed{9, 1, 9}))}}),
      ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(
      run_engine(1, {{0, join(task_command(task_fields(1), {access(0, 3, 16)}),
                              frame(comm::wire::Kind::retire, body_of(comm::wire::Retire{3})))}}),
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace taskgrid::engine
