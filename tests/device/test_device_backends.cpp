// The device layer (src/device/). Every backend this machine has runs the
// same conformance tests (the emulated device always; CUDA where a GPU is:
// the list is made at start-up, so nothing is skipped); then what only the
// emulated device promises (memory the host cannot touch, poisoned fresh
// memory, failures reported per stream), the stream pool and the settings.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "device/backend.h"
#include "device/emulated_backend.h"
#include "device/link_probe.h"
#include "device/stream_pool.h"
#include "taskgrid/taskgrid.hpp"

namespace taskgrid::device {
namespace {

// Polls an event until done; a generous deadline turns a hang into a
// failure (no assertion here depends on how fast anything is).
bool wait_done(Backend& backend, Event* event) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!backend.event_done(event)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// Copies `bytes` of staging memory to `on_device` and back on `stream`,
// zeroing `staging` in between: false when a copy did not finish in time.
bool there_and_back(Backend& b, Stream* stream, unsigned char* staging, void* on_device,
                    size_t bytes) {
  b.copy_async(stream, on_device, staging, bytes, CopyKind::host_to_device);
  Event* in = b.record_event(stream);
  const bool in_done = wait_done(b, in);
  b.destroy_event(in);
  if (!in_done) return false;
  std::memset(staging, 0, bytes);
  b.copy_async(stream, staging, on_device, bytes, CopyKind::device_to_host);
  Event* out = b.record_event(stream);
  const bool out_done = wait_done(b, out);
  b.destroy_event(out);
  return out_done;
}

// A flag a host function waits on, with a deadline (no hang on failure).
struct Gate {
  std::atomic<bool> open{false};
  std::atomic<bool> timed_out{false};
  static void pass(void* self) {
    auto* gate = static_cast<Gate*>(self);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!gate->open.load()) {
      if (std::chrono::steady_clock::now() > deadline) {
        gate->timed_out = true;
        return;
      }
      std::this_thread::yield();
    }
  }
};

std::vector<std::string> backends_here() {
  std::vector<std::string> names{"emulated"};
  std::string why;
  BackendSettings cuda;
  cuda.kind = BackendKind::automatic;
  if (open_backend(cuda)) names.push_back("cuda");
  return names;
}

std::unique_ptr<Backend> open_named(const std::string& name, uint64_t memory_limit = 0) {
  BackendSettings settings;
  settings.kind = parse_backend_kind(name);
  settings.emulated_devices = 2;
  settings.memory_limit = memory_limit;
  return open_backend(settings);
}

class Conformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = open_named(GetParam());
    ASSERT_TRUE(backend_);
    ASSERT_GE(backend_->devices(), 1);
  }
  std::unique_ptr<Backend> backend_;
};

TEST_P(Conformance, BytesGoThereAndBackThroughTwoAllocations) {
  Backend& b = *backend_;
  const size_t bytes = 3 * 4096 + 17;  // not a whole number of pages
  std::vector<unsigned char> in(bytes), out(bytes, 0);
  std::iota(in.begin(), in.end(), 1);
  const int last = b.devices() - 1;  // a second device where there is one: a peer copy
  void* first = b.allocate(0, bytes);
  void* second = b.allocate(last, bytes);
  ASSERT_TRUE(first && second);
  Stream* stream = b.create_stream(0);
  b.copy_async(stream, first, in.data(), bytes, CopyKind::host_to_device);
  b.copy_async(stream, second, first, bytes, CopyKind::device_to_device);
  b.copy_async(stream, out.data(), second, bytes, CopyKind::device_to_host);
  Event* done = b.record_event(stream);
  ASSERT_TRUE(wait_done(b, done));
  EXPECT_EQ(in, out);
  b.destroy_event(done);
  b.destroy_stream(stream);
  b.release(0, first);
  b.release(last, second);
}

TEST_P(Conformance, StagingMemoryCarriesCopiesBothWays) {
  Backend& b = *backend_;
  const size_t bytes = 1 << 20;
  auto* staging = static_cast<unsigned char*>(b.allocate_staging(bytes));
  ASSERT_NE(staging, nullptr);
  for (size_t i = 0; i < bytes; ++i) staging[i] = static_cast<unsigned char>(i * 7);
  std::vector<unsigned char> expected(staging, staging + bytes);
  void* on_device = b.allocate(0, bytes);
  ASSERT_TRUE(on_device);
  Stream* stream = b.create_stream(0);
  ASSERT_TRUE(there_and_back(b, stream, staging, on_device, bytes));
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), staging));
  b.destroy_stream(stream);
  b.release(0, on_device);
  b.release_staging(staging);
}

TEST_P(Conformance, TheHostToDeviceLinkIsMeasured) {
  const LinkEstimate link = measure_link(*backend_, 0);
  EXPECT_GT(link.latency_seconds, 0);
  EXPECT_LT(link.latency_seconds, 1.0);
  EXPECT_GT(link.bandwidth_bytes_per_second, 1e6);  // any device moves a MB/s
  // The probe gave back what it took.
  void* whole = backend_->allocate(0, size_t{8} << 20);
  EXPECT_NE(whole, nullptr);
  if (whole) backend_->release(0, whole);
}

TEST_P(Conformance, OneStreamRunsInOrderAndItsEventWaitsForEarlierWork) {
  Backend& b = *backend_;
  Stream* stream = b.create_stream(0);
  Gate gate;
  std::vector<int> order;
  struct Append {
    std::vector<int>* order;
    int value;
    static void run(void* self) {
      auto* a = static_cast<Append*>(self);
      a->order->push_back(a->value);
    }
  };
  Append one{&order, 1}, two{&order, 2}, three{&order, 3};
  b.host_function_async(stream, Append::run, &one);
  b.host_function_async(stream, Gate::pass, &gate);
  b.host_function_async(stream, Append::run, &two);
  Event* after_two = b.record_event(stream);
  b.host_function_async(stream, Append::run, &three);
  // The gate holds the stream: the event after it cannot be done yet.
  EXPECT_FALSE(b.event_done(after_two));
  gate.open = true;
  ASSERT_TRUE(wait_done(b, after_two));
  Event* after_three = b.record_event(stream);
  ASSERT_TRUE(wait_done(b, after_three));
  EXPECT_FALSE(gate.timed_out);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  b.destroy_event(after_two);
  b.destroy_event(after_three);
  b.destroy_stream(stream);
}

TEST_P(Conformance, AStreamHeldByHostWorkDoesNotHoldAnother) {
  // Stream A is held by a host function until the test opens its gate; stream
  // C's copies must still finish. Only what the backend contract promises is
  // asserted: CUDA may run the host functions of all streams on one thread
  // (cudaLaunchHostFunc), so C carries copies, not a host function.
  Backend& b = *backend_;
  const size_t bytes = 64 << 10;
  auto* staging = static_cast<unsigned char*>(b.allocate_staging(bytes));
  ASSERT_NE(staging, nullptr);
  for (size_t i = 0; i < bytes; ++i) staging[i] = static_cast<unsigned char>(i * 13 + 5);
  const std::vector<unsigned char> expected(staging, staging + bytes);
  void* on_device = b.allocate(0, bytes);
  ASSERT_TRUE(on_device);
  Stream* a = b.create_stream(0);
  Stream* c = b.create_stream(0);
  Gate gate;
  b.host_function_async(a, Gate::pass, &gate);
  Event* a_done = b.record_event(a);
  ASSERT_TRUE(there_and_back(b, c, staging, on_device, bytes));
  // A is still held: C did not wait for it.
  EXPECT_FALSE(b.event_done(a_done));
  gate.open = true;
  ASSERT_TRUE(wait_done(b, a_done));
  EXPECT_FALSE(gate.timed_out);
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), staging));
  b.destroy_event(a_done);
  b.destroy_stream(a);
  b.destroy_stream(c);
  b.release(0, on_device);
  b.release_staging(staging);
}

TEST_P(Conformance, ADeviceThatDoesNotExistIsNamed) {
  Backend& b = *backend_;
  const int missing = b.devices();
  try {
    b.allocate(missing, 64);
    FAIL() << "allocated on a device that does not exist";
  } catch (const Error& error) {
    EXPECT_NE(
        std::string(error.what()).find("device " + std::to_string(missing) + " does not exist"),
        std::string::npos)
        << error.what();
  }
  EXPECT_THROW(b.create_stream(-1), Error);
}

INSTANTIATE_TEST_SUITE_P(Backends, Conformance, ::testing::ValuesIn(backends_here()),
                         [](const ::testing::TestParamInfo<std::string>& named) {
                           return named.param;
                         });

TEST(EmulatedDevice, TheHostCannotTouchDeviceMemory) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EmulatedBackend backend(1, 1 << 20);
  auto* pointer = static_cast<volatile char*>(backend.allocate(0, 64));
  ASSERT_NE(pointer, nullptr);
  EXPECT_DEATH(pointer[0] = 1, "");
  // Through its host view the same bytes are reachable.
  char* view = backend.host_view(const_cast<char*>(pointer));
  view[0] = 7;
  EXPECT_EQ(backend.host_view(const_cast<char*>(pointer))[0], 7);
}

TEST(EmulatedDevice, ALinkIsNotMeasuredWhereAProbeDoesNotFit) {
  EmulatedBackend small(1, 64 << 10);  // room for a 32 KiB probe only
  const LinkEstimate link = measure_link(small, 0);
  EXPECT_EQ(link.bandwidth_bytes_per_second, 0);
  EXPECT_EQ(small.bytes_in_use(0), 0u);
}

TEST(EmulatedDevice, FreshMemoryIsPoisonedNotZero) {
  EmulatedBackend backend(1, 1 << 20);
  void* pointer = backend.allocate(0, 256);
  std::vector<unsigned char> out(256, 0);
  Stream* stream = backend.create_stream(0);
  backend.copy_async(stream, out.data(), pointer, out.size(), CopyKind::device_to_host);
  Event* done = backend.record_event(stream);
  ASSERT_TRUE(wait_done(backend, done));
  for (unsigned char byte : out) ASSERT_EQ(byte, 0xa5);
  backend.destroy_event(done);
  backend.destroy_stream(stream);
}

TEST(EmulatedDevice, AFullDeviceSaysSoUntilMemoryIsReleased) {
  EmulatedBackend backend(2, 1 << 20);
  void* half = backend.allocate(0, 512 << 10);
  void* rest = backend.allocate(0, 512 << 10);
  ASSERT_TRUE(half && rest);
  EXPECT_EQ(backend.allocate(0, 64), nullptr);  // full: the engine would evict
  EXPECT_NE(backend.allocate(1, 64), nullptr);  // the other device has its own limit
  EXPECT_EQ(backend.bytes_in_use(0), uint64_t{1} << 20);
  backend.release(0, half);
  EXPECT_NE(backend.allocate(0, 64), nullptr);
  EXPECT_EQ(backend.memory_limit(0), uint64_t{1} << 20);
}

TEST(EmulatedDevice, MisusedCopiesAndReleasesAreErrors) {
  EmulatedBackend backend(1, 1 << 20);
  void* device = backend.allocate(0, 100);  // a 128-byte block
  std::vector<char> host(4096);
  Stream* stream = backend.create_stream(0);
  auto message = [&](auto&& call) {
    try {
      call();
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] {
              backend.copy_async(stream, device, host.data(), 129, CopyKind::host_to_device);
            }).find("not within one allocation"),
            std::string::npos);
  EXPECT_NE(message([&] {
              backend.copy_async(stream, device, device, 8, CopyKind::host_to_device);
            }).find("from device memory"),
            std::string::npos);
  EXPECT_NE(message([&] {
              backend.copy_async(stream, host.data(), host.data() + 8, 8, CopyKind::device_to_host);
            }).find("not device memory"),
            std::string::npos);
  EXPECT_NE(message([&] { backend.release(0, host.data()); }).find("not its memory"),
            std::string::npos);
  EXPECT_NE(message([&] {
              backend.release(0, static_cast<char*>(device) + 64);
            }).find("was not allocated"),
            std::string::npos);
  // A copy within the block's rounding is still one allocation.
  backend.copy_async(stream, device, host.data(), 128, CopyKind::host_to_device);
  Event* done = backend.record_event(stream);
  ASSERT_TRUE(wait_done(backend, done));
  backend.destroy_event(done);
  backend.destroy_stream(stream);
}

TEST(EmulatedDevice, AFailedOperationFailsItsStreamAndSaysWhich) {
  EmulatedBackend backend(1, 1 << 20);
  Stream* stream = backend.create_stream(0);
  std::atomic<bool> ran_after{false};
  Event* before = backend.record_event(stream);
  backend.host_function_async(
      stream, [](void*) { throw std::runtime_error("kernel fault at 0x40"); }, nullptr);
  backend.host_function_async(
      stream, [](void* flag) { static_cast<std::atomic<bool>*>(flag)->store(true); }, &ran_after);
  Event* after = backend.record_event(stream);
  // Work before the failure is unaffected; the event after it reports it.
  ASSERT_TRUE(wait_done(backend, before));
  std::string message;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (message.empty() && std::chrono::steady_clock::now() < deadline) {
    try {
      backend.event_done(after);
    } catch (const Error& error) {
      message = error.what();
    }
  }
  EXPECT_NE(message.find("emulated device 0"), std::string::npos) << message;
  EXPECT_NE(message.find("kernel fault at 0x40"), std::string::npos) << message;
  EXPECT_FALSE(ran_after);  // skipped: the stream had failed
  backend.destroy_event(before);
  backend.destroy_event(after);
  backend.destroy_stream(stream);
}

TEST(StreamPool, CapsActiveStreamsPerDeviceAndReusesIdleOnes) {
  EmulatedBackend backend(2, 1 << 20);
  StreamPool pool(backend, 2);
  Stream* a = pool.acquire(0);
  Stream* b = pool.acquire(0);
  ASSERT_TRUE(a && b);
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.acquire(0), nullptr);  // the cap
  Stream* other = pool.acquire(1);      // another device has its own
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->device, 1);
  pool.give_back(b);
  EXPECT_EQ(pool.acquire(0), b);  // reused, not created
  EXPECT_EQ(pool.created(0), 2);
  EXPECT_EQ(pool.active(0), 2);
  pool.give_back(a);
  pool.give_back(b);
  EXPECT_EQ(pool.active(0), 0);
  EXPECT_THROW(pool.give_back(a), Error);  // not out any more
  EXPECT_THROW(pool.acquire(2), Error);
  EXPECT_THROW(StreamPool(backend, 0), Error);
}

TEST(StreamPool, StreamsItGaveOutWorkAndAreDestroyedWithIt) {
  EmulatedBackend backend(1, 1 << 20);
  std::vector<char> in(1000, 'x'), out(1000, 0);
  void* device = backend.allocate(0, in.size());
  {
    StreamPool pool(backend, 4);
    Stream* stream = pool.acquire(0);
    backend.copy_async(stream, device, in.data(), in.size(), CopyKind::host_to_device);
    backend.copy_async(stream, out.data(), device, in.size(), CopyKind::device_to_host);
    // Not given back, not waited for: the pool's destructor waits for it.
  }
  EXPECT_EQ(in, out);
}

TEST(BackendSettings, NamesAreCheckedAndNoneMeansNone) {
  EXPECT_EQ(parse_backend_kind("emulated"), BackendKind::emulated);
  EXPECT_EQ(parse_backend_kind("auto"), BackendKind::automatic);
  try {
    parse_backend_kind("gpu");
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("TASKGRID_DEVICE=gpu"), std::string::npos);
  }
  BackendSettings none;
  none.kind = BackendKind::none;
  EXPECT_EQ(open_backend(none), nullptr);
  BackendSettings emulated;
  emulated.kind = BackendKind::emulated;
  emulated.emulated_devices = 3;
  emulated.memory_limit = 1 << 20;
  auto backend = open_backend(emulated);
  ASSERT_TRUE(backend);
  EXPECT_STREQ(backend->name(), "emulated");
  EXPECT_EQ(backend->devices(), 3);
  EXPECT_THROW(EmulatedBackend(0, 1 << 20), Error);
}

TEST(BackendSettings, CudaAskedForWithoutAGpuSaysWhy) {
  // Here (no GPU) asking for CUDA must fail loudly; where a GPU is, it opens.
  BackendSettings cuda;
  cuda.kind = BackendKind::cuda;
  const bool gpu_here = backends_here().size() > 1;
  if (gpu_here) {
    EXPECT_GE(open_backend(cuda)->devices(), 1);
  } else {
    try {
      open_backend(cuda);
      FAIL() << "TASKGRID_DEVICE=cuda opened without a GPU";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("TASKGRID_DEVICE=cuda, but "), std::string::npos)
          << error.what();
    }
  }
}

}  // namespace
}  // namespace taskgrid::device
