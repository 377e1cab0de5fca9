// graph::DependencyTracker: versions per handle (renaming). Expected versions
// follow from the header's contract: a read names the version current before
// the task; every write creates the next id from `next_version` and
// supersedes the version it replaces.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/dependency_tracker.h"
#include "taskgrid/taskgrid.hpp"

namespace {

using taskgrid::AccessMode;
using taskgrid::DataAccess;
using taskgrid::DataHandle;
using taskgrid::Error;
using taskgrid::graph::DependencyTracker;
using taskgrid::graph::ResolvedAccess;

// A tracker with one resolve() per task, as the planner uses it.
class Tracker {
 public:
  DataHandle add(size_t bytes = 64, uint64_t initial_version = 1) {
    if (initial_version >= next_version) next_version = initial_version + 1;
    return tracker.add_handle(&storage_, bytes, initial_version);
  }
  std::vector<ResolvedAccess> task(std::vector<DataAccess> accesses) {
    last.clear();
    tracker.resolve(accesses.data(), accesses.size(), next_version, last);
    return last;
  }
  uint64_t current(DataHandle h) { return tracker.state(h).current_version; }

  DependencyTracker tracker;
  uint64_t next_version = 1;
  std::vector<ResolvedAccess> last;  // of the last task()

 private:
  char storage_[8] = {};
};

// The message names handle `id` ("handle 12", not a prefix of "handle 123").
bool names_handle(const std::string& message, uint64_t id) {
  const std::string needle = "handle " + std::to_string(id);
  for (size_t at = message.find(needle); at != std::string::npos;
       at = message.find(needle, at + 1)) {
    const size_t after = at + needle.size();
    if (after == message.size() || !std::isdigit(static_cast<unsigned char>(message[after])))
      return true;
  }
  return false;
}

template <typename F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  } catch (...) {
    return "<not a taskgrid::Error>";
  }
  return "<no exception>";
}

TEST(DependencyTracker, HandlesAreNumberedFromOne) {
  Tracker t;
  const DataHandle a = t.add(8, 1);
  const DataHandle b = t.add(16, 2);
  EXPECT_EQ(a.id, 1u);
  EXPECT_EQ(b.id, 2u);
  EXPECT_TRUE(a);
  EXPECT_EQ(t.tracker.size(), 2u);
  EXPECT_EQ(t.tracker.state(a).bytes, 8u);
  EXPECT_EQ(t.tracker.state(b).bytes, 16u);
  EXPECT_EQ(t.tracker.state(a).current_version, 1u);
  EXPECT_EQ(t.tracker.state(b).current_version, 2u);
  EXPECT_FALSE(t.tracker.state(a).released);
  EXPECT_EQ(t.tracker.state(a).tasks_in_flight, 0u);
}

TEST(DependencyTracker, ReadAfterWriteSeesTheWritersVersion) {
  Tracker t;
  const DataHandle h = t.add(64, 1);
  const auto writer = t.task({taskgrid::out(h)});
  ASSERT_EQ(writer.size(), 1u);
  const uint64_t written = writer[0].out_version;
  EXPECT_NE(written, 1u);

  const auto reader = t.task({taskgrid::in(h)});
  ASSERT_EQ(reader.size(), 1u);
  EXPECT_EQ(reader[0].handle, h.id);
  EXPECT_EQ(reader[0].mode, AccessMode::in);
  EXPECT_EQ(reader[0].in_version, written);
  EXPECT_EQ(reader[0].out_version, 0u);
  EXPECT_EQ(reader[0].superseded, 0u);

  // A second reader still sees the same version: reads create nothing.
  const auto reader2 = t.task({taskgrid::in(h)});
  EXPECT_EQ(reader2[0].in_version, written);
  EXPECT_EQ(t.current(h), written);
}

TEST(DependencyTracker, ReadOfTheInitialVersion) {
  Tracker t;
  const DataHandle h = t.add(64, 7);
  const auto reader = t.task({taskgrid::in(h)});
  EXPECT_EQ(reader[0].in_version, 7u);
  EXPECT_EQ(t.current(h), 7u);
}

TEST(DependencyTracker, WriteAfterReadCreatesANewVersion) {
  Tracker t;
  const DataHandle h = t.add(64, 1);
  const auto r1 = t.task({taskgrid::in(h)});
  const auto r2 = t.task({taskgrid::in(h)});
  EXPECT_EQ(r1[0].in_version, 1u);
  EXPECT_EQ(r2[0].in_version, 1u);

  const auto w = t.task({taskgrid::out(h)});
  EXPECT_EQ(w[0].mode, AccessMode::out);
  EXPECT_EQ(w[0].in_version, 0u);  // out does not read
  EXPECT_NE(w[0].out_version, 0u);
  EXPECT_NE(w[0].out_version, r1[0].in_version);  // the readers keep their version
  EXPECT_EQ(w[0].superseded, r1[0].in_version);
  EXPECT_EQ(t.current(h), w[0].out_version);

  const auto later = t.task({taskgrid::in(h)});
  EXPECT_EQ(later[0].in_version, w[0].out_version);
}

TEST(DependencyTracker, WriteAfterWriteCreatesSuccessiveVersions) {
  Tracker t;
  const DataHandle h = t.add(64, 1);
  uint64_t previous = 1;
  std::vector<uint64_t> seen = {1};
  for (int i = 0; i < 5; ++i) {
    const auto w = t.task({i % 2 ? taskgrid::out(h) : taskgrid::inout(h)});
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0].superseded, previous) << "writer " << i;
    for (uint64_t v : seen) EXPECT_NE(w[0].out_version, v) << "writer " << i;
    EXPECT_GT(w[0].out_version, previous) << "versions come from an increasing counter";
    EXPECT_EQ(t.current(h), w[0].out_version);
    seen.push_back(w[0].out_version);
    previous = w[0].out_version;
  }
}

TEST(DependencyTracker, VersionsComeFromNextVersion) {
  Tracker t;
  const DataHandle a = t.add(8, 1);
  const DataHandle b = t.add(8, 2);
  t.next_version = 100;
  const auto w = t.task({taskgrid::out(a), taskgrid::in(b), taskgrid::inout(b)});
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].out_version, 100u);
  EXPECT_EQ(w[1].out_version, 0u);
  EXPECT_EQ(w[2].out_version, 101u);
  EXPECT_EQ(t.next_version, 102u);  // one id per write, none per read
  const auto r = t.task({taskgrid::in(a), taskgrid::in(b)});
  EXPECT_EQ(t.next_version, 102u);
  EXPECT_EQ(r[0].in_version, 100u);
  EXPECT_EQ(r[1].in_version, 101u);
}

TEST(DependencyTracker, HandlesAreIndependent) {
  Tracker t;
  const DataHandle a = t.add(8, 1);
  const DataHandle b = t.add(8, 2);
  t.task({taskgrid::out(a)});
  const auto r = t.task({taskgrid::in(b)});
  EXPECT_EQ(r[0].in_version, 2u);
  EXPECT_EQ(t.current(b), 2u);
}

TEST(DependencyTracker, InAndOutOfOneHandleInOneTask) {
  Tracker t;
  const DataHandle h = t.add(64, 1);
  const auto w = t.task({taskgrid::out(h)});
  const uint64_t before = w[0].out_version;

  const auto task = t.task({taskgrid::in(h), taskgrid::out(h)});
  ASSERT_EQ(task.size(), 2u);
  EXPECT_EQ(task[0].mode, AccessMode::in);
  EXPECT_EQ(task[0].in_version, before);
  EXPECT_EQ(task[0].out_version, 0u);
  EXPECT_EQ(task[1].mode, AccessMode::out);
  EXPECT_EQ(task[1].in_version, 0u);
  EXPECT_NE(task[1].out_version, before);
  EXPECT_NE(task[1].out_version, 0u);
  EXPECT_EQ(task[1].superseded, before);
  EXPECT_EQ(t.current(h), task[1].out_version);
}

TEST(DependencyTracker, ReadListedAfterTheWriteStillSeesThePreTaskVersion) {
  Tracker t;
  const DataHandle h = t.add(64, 1);
  const auto task = t.task({taskgrid::out(h), taskgrid::in(h)});
  ASSERT_EQ(task.size(), 2u);
  EXPECT_EQ(task[1].in_version, 1u);
  EXPECT_EQ(task[0].superseded, 1u);
  EXPECT_NE(task[0].out_version, 1u);
  EXPECT_EQ(t.current(h), task[0].out_version);
}

TEST(DependencyTracker, InoutReadsThePreviousAndCreatesANewVersion) {
  Tracker t;
  const DataHandle h = t.add(64, 1);
  const auto first = t.task({taskgrid::inout(h)});
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].mode, AccessMode::inout);
  EXPECT_EQ(first[0].in_version, 1u);
  EXPECT_EQ(first[0].superseded, 1u);
  EXPECT_NE(first[0].out_version, 1u);
  EXPECT_NE(first[0].out_version, 0u);

  const auto second = t.task({taskgrid::inout(h)});
  EXPECT_EQ(second[0].in_version, first[0].out_version);
  EXPECT_EQ(second[0].superseded, first[0].out_version);
  EXPECT_NE(second[0].out_version, first[0].out_version);
  EXPECT_EQ(t.current(h), second[0].out_version);
}

TEST(DependencyTracker, TwoWritingAccessesOfOneHandleThrow) {
  const std::vector<std::vector<AccessMode>> cases = {
      {AccessMode::out, AccessMode::out},
      {AccessMode::inout, AccessMode::out},
      {AccessMode::out, AccessMode::inout},
      {AccessMode::inout, AccessMode::inout},
      {AccessMode::in, AccessMode::out, AccessMode::inout},
  };
  for (const auto& modes : cases) {
    Tracker t;
    const DataHandle other = t.add(8, 1);
    const DataHandle h = t.add(64, 2);
    std::vector<DataAccess> accesses = {taskgrid::out(other)};
    for (AccessMode m : modes) accesses.push_back(DataAccess{h, m});
    const uint64_t next_before = t.next_version;
    const std::string message = error_message([&] { t.task(accesses); });
    EXPECT_TRUE(names_handle(message, h.id)) << message;
    // The rejected task changed nothing.
    EXPECT_EQ(t.current(h), 2u);
    EXPECT_EQ(t.current(other), 1u);
    EXPECT_EQ(t.next_version, next_before);
  }
}

TEST(DependencyTracker, WritesOfDifferentHandlesInOneTaskAreFine) {
  Tracker t;
  const DataHandle a = t.add(8, 1);
  const DataHandle b = t.add(8, 2);
  const auto task = t.task({taskgrid::out(a), taskgrid::inout(b), taskgrid::in(a)});
  ASSERT_EQ(task.size(), 3u);
  EXPECT_NE(task[0].out_version, task[1].out_version);
  EXPECT_EQ(task[2].in_version, 1u);
}

TEST(DependencyTracker, UnknownHandleThrowsNamingIt) {
  Tracker t;
  t.add();
  t.add();
  for (uint64_t id : {uint64_t{0}, uint64_t{3}, uint64_t{1000}}) {
    const DataHandle bad{id};
    EXPECT_TRUE(names_handle(error_message([&] { t.task({taskgrid::in(bad)}); }), id)) << id;
    EXPECT_TRUE(names_handle(error_message([&] { t.task({taskgrid::out(bad)}); }), id)) << id;
    EXPECT_TRUE(names_handle(error_message([&] { t.tracker.state(bad); }), id)) << id;
    EXPECT_TRUE(names_handle(error_message([&] { t.tracker.release(bad); }), id)) << id;
  }
}

TEST(DependencyTracker, UnknownHandleAmongValidOnesChangesNothing) {
  Tracker t;
  const DataHandle h = t.add(8, 1);
  const uint64_t next_before = t.next_version;
  EXPECT_THROW(t.task({taskgrid::out(h), taskgrid::in(DataHandle{9})}), Error);
  EXPECT_EQ(t.current(h), 1u);
  EXPECT_EQ(t.next_version, next_before);
}

TEST(DependencyTracker, ReleasedHandleThrowsNamingIt) {
  Tracker t;
  const DataHandle a = t.add(8, 1);
  const DataHandle b = t.add(8, 2);
  const auto w = t.task({taskgrid::out(b)});
  EXPECT_EQ(t.tracker.release(b), w[0].out_version);  // the version to retire
  for (AccessMode m : {AccessMode::in, AccessMode::out, AccessMode::inout}) {
    const std::string message = error_message([&] { t.task({DataAccess{b, m}}); });
    EXPECT_TRUE(names_handle(message, b.id)) << message;
  }
  EXPECT_TRUE(names_handle(error_message([&] { t.tracker.state(b); }), b.id));
  EXPECT_TRUE(names_handle(error_message([&] { t.tracker.release(b); }), b.id));
  // The other handle is unaffected; with no task in flight on it, the
  // released one is forgotten at once.
  EXPECT_NO_THROW(t.task({taskgrid::in(a)}));
  EXPECT_EQ(t.tracker.any_state(b.id), nullptr);
  EXPECT_EQ(t.tracker.tracked(), 1u);
  EXPECT_EQ(t.tracker.size(), 2u);
}

TEST(DependencyTracker, ReleasedHandleStaysUntilItsTasksAreDone) {
  Tracker t;
  const DataHandle h = t.add(8, 1);
  t.task({taskgrid::in(h), taskgrid::out(h)});
  DependencyTracker::count_in_flight(t.last);  // two accesses: counted twice
  EXPECT_EQ(t.tracker.state(h).tasks_in_flight, 2u);
  const uint64_t current = t.current(h);
  EXPECT_EQ(t.tracker.release(h), current);
  // Released: the program may not use it, but completions still find it.
  EXPECT_TRUE(names_handle(error_message([&] { t.tracker.state(h); }), h.id));
  ASSERT_NE(t.tracker.any_state(h.id), nullptr);
  EXPECT_TRUE(t.tracker.any_state(h.id)->released);
  EXPECT_FALSE(t.tracker.task_done(t.tracker.any_state(h.id)));
  EXPECT_NE(t.tracker.any_state(h.id), nullptr);
  EXPECT_TRUE(t.tracker.task_done(t.tracker.any_state(h.id)));  // drained: forgotten
  EXPECT_EQ(t.tracker.any_state(h.id), nullptr);
  EXPECT_TRUE(names_handle(error_message([&] { t.tracker.state(h); }), h.id));
  EXPECT_NE(error_message([&] { t.tracker.state(h); }).find("released"), std::string::npos);
}

TEST(DependencyTracker, TaskDoneReportsWhenAHandleDrains) {
  Tracker t;
  const DataHandle a = t.add(8, 1);
  const DataHandle b = t.add(8, 2);
  t.task({taskgrid::in(a), taskgrid::inout(b)});
  DependencyTracker::count_in_flight(t.last);
  t.task({taskgrid::in(b)});
  DependencyTracker::count_in_flight(t.last);
  EXPECT_EQ(t.tracker.state(a).tasks_in_flight, 1u);
  EXPECT_EQ(t.tracker.state(b).tasks_in_flight, 2u);
  EXPECT_TRUE(t.tracker.task_done(t.tracker.any_state(a.id)));
  EXPECT_FALSE(t.tracker.task_done(t.tracker.any_state(b.id)));
  EXPECT_TRUE(t.tracker.task_done(t.tracker.any_state(b.id)));
  EXPECT_EQ(t.tracker.state(b).tasks_in_flight, 0u);
}

TEST(DependencyTracker, OwnersAreRecordedAndResolved) {
  DependencyTracker tracker;
  char storage[8] = {};
  const DataHandle a = tracker.add_handle(storage, 8, 1, 3);
  const DataHandle b = tracker.add_handle(storage, 8, 2);
  EXPECT_EQ(tracker.state(a).owner, 3);
  EXPECT_EQ(tracker.state(b).owner, 0);
  uint64_t next_version = 3;
  std::vector<ResolvedAccess> out;
  const DataAccess accesses[] = {taskgrid::in(b), taskgrid::out(a)};
  tracker.resolve(accesses, 2, next_version, out);
  EXPECT_EQ(out[0].owner, 0);
  EXPECT_EQ(out[1].owner, 3);
}

TEST(DependencyTracker, EnterAndReleaseForeverInBoundedMemory) {
  // One handle lives for the whole program while a million temporary ones
  // are entered, used and released: the table must not grow with the ids.
  Tracker t;
  const DataHandle lasting = t.add(8, 1);
  std::vector<DataHandle> live;
  for (int i = 0; i < 1'000'000; ++i) {
    const DataHandle h = t.add(8, t.next_version);
    t.task({taskgrid::in(lasting), taskgrid::inout(h)});
    live.push_back(h);
    if (live.size() > 50) {
      t.tracker.release(live.front());
      live.erase(live.begin());
    }
  }
  EXPECT_EQ(t.tracker.size(), 1'000'001u);
  EXPECT_EQ(t.tracker.tracked(), 51u);
  EXPECT_LE(t.tracker.table_capacity(), 1024u);
  EXPECT_EQ(t.current(lasting), 1u);
  EXPECT_EQ(t.tracker.state(live.back()).bytes, 8u);
  EXPECT_TRUE(names_handle(error_message([&] { t.tracker.state(DataHandle{5}); }), 5));
}

TEST(DependencyTracker, AHandleStateStaysPutWhileOthersComeAndGo) {
  // Tasks in flight keep pointers to the states of their handles (their
  // completions count down without a lookup): a state may not move while
  // the table grows, nor be reused while its handle is still tracked.
  Tracker t;
  const DataHandle kept = t.add(8, 1);
  const DataHandle released = t.add(8, 2);
  t.task({taskgrid::in(kept), taskgrid::in(released)});
  DependencyTracker::count_in_flight(t.last);
  taskgrid::graph::HandleState* const kept_state = t.last[0].state;
  taskgrid::graph::HandleState* const released_state = t.last[1].state;
  t.tracker.release(released);  // a task in flight still uses it
  for (int i = 0; i < 20000; ++i) {
    const DataHandle h = t.add(8, 3);
    if (i % 2) t.tracker.release(h);  // forgotten at once: its state is reused
  }
  EXPECT_GE(t.tracker.table_capacity(), 1024u);  // the table did grow
  EXPECT_EQ(&t.tracker.state(kept), kept_state);
  EXPECT_EQ(t.tracker.any_state(released.id), released_state);
  EXPECT_EQ(released_state->id, released.id);
  EXPECT_TRUE(released_state->released);
  EXPECT_TRUE(t.tracker.task_done(released_state));  // drained: forgotten now
  EXPECT_EQ(t.tracker.any_state(released.id), nullptr);
  EXPECT_TRUE(t.tracker.task_done(kept_state));
  EXPECT_EQ(t.tracker.state(kept).tasks_in_flight, 0u);
}

TEST(DependencyTracker, InvalidModeThrows) {
  for (unsigned value : {0u, 4u, 7u, 255u}) {
    Tracker t;
    const DataHandle h = t.add(8, 1);
    const uint64_t next_before = t.next_version;
    const DataAccess bad{h, static_cast<AccessMode>(value)};
    EXPECT_THROW(t.task({bad}), Error) << value;
    EXPECT_THROW(t.task({taskgrid::out(h), bad}), Error) << value;
    EXPECT_EQ(t.current(h), 1u);
    EXPECT_EQ(t.next_version, next_before);
  }
}

TEST(DependencyTracker, BytesAreCarriedThrough) {
  Tracker t;
  const DataHandle a = t.add(123, 1);
  const DataHandle b = t.add(0, 2);
  const DataHandle c = t.add(size_t{1} << 33, 3);
  const auto task = t.task({taskgrid::in(a), taskgrid::out(b), taskgrid::inout(c)});
  ASSERT_EQ(task.size(), 3u);
  EXPECT_EQ(task[0].bytes, 123u);
  EXPECT_EQ(task[1].bytes, 0u);
  EXPECT_EQ(task[2].bytes, size_t{1} << 33);
  EXPECT_EQ(task[0].handle, a.id);
  EXPECT_EQ(task[1].handle, b.id);
  EXPECT_EQ(task[2].handle, c.id);
}

TEST(DependencyTracker, ResolveLeavesTasksInFlightAlone) {
  Tracker t;
  const DataHandle a = t.add(8, 1);
  const DataHandle b = t.add(8, 2);
  t.tracker.state(b).tasks_in_flight = 5;
  t.task({taskgrid::in(a), taskgrid::out(b)});
  t.task({taskgrid::inout(a)});
  t.task({taskgrid::in(b)});
  EXPECT_EQ(t.tracker.state(a).tasks_in_flight, 0u);
  EXPECT_EQ(t.tracker.state(b).tasks_in_flight, 5u);
}

TEST(DependencyTracker, OutputHasOneEntryPerAccess) {
  Tracker t;
  const DataHandle h = t.add(8, 1);
  std::vector<ResolvedAccess> out(10);
  t.tracker.resolve(nullptr, 0, t.next_version, out);
  EXPECT_TRUE(out.empty());
  const DataAccess accesses[] = {taskgrid::in(h), taskgrid::in(h)};
  out.resize(7);
  t.tracker.resolve(accesses, 2, t.next_version, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].in_version, 1u);
  EXPECT_EQ(out[1].in_version, 1u);
}

}  // namespace
