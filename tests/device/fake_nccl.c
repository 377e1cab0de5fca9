/* A stand-in for libnccl.so.2 with the entry points TaskGrid resolves, for
 * the loader's tests (tests/device/test_nccl_loader.cpp): it reports a
 * version (FAKE_NCCL_VERSION, default 22809) and makes ids, and refuses to
 * create communicators. Built without ncclAllReduce (FAKE_NCCL_PARTIAL) it
 * is a library that is not the NCCL TaskGrid needs. */
#include <stdlib.h>
#include <string.h>

typedef struct {
  char internal[128];
} fake_unique_id;

int ncclGetVersion(int* version) {
  const char* text = getenv("FAKE_NCCL_VERSION");
  *version = text ? atoi(text) : 22809;
  return 0;
}
int ncclGetUniqueId(fake_unique_id* id) {
  for (int i = 0; i < 128; ++i) id->internal[i] = (char)(i * 3 + 1);
  return 0;
}
int ncclCommInitRank(void** comm, int ranks, fake_unique_id id, int rank) {
  (void)ranks;
  (void)id;
  (void)rank;
  *comm = NULL;
  return 5; /* ncclInvalidUsage */
}
int ncclCommDestroy(void* comm) { return comm ? 0 : 4; }
int ncclCommAbort(void* comm) { return comm ? 0 : 4; }
int ncclCommGetAsyncError(void* comm, int* error) {
  (void)comm;
  *error = 0;
  return 0;
}
int ncclBroadcast(const void* send, void* recv, size_t count, int type, int root, void* comm,
                  void* stream) {
  (void)send, (void)recv, (void)count, (void)type, (void)root, (void)comm, (void)stream;
  return 4;
}
#ifndef FAKE_NCCL_PARTIAL
int ncclAllReduce(const void* send, void* recv, size_t count, int type, int op, void* comm,
                  void* stream) {
  (void)send, (void)recv, (void)count, (void)type, (void)op, (void)comm, (void)stream;
  return 4;
}
#endif
const char* ncclGetErrorString(int code) {
  static char text[32];
  strcpy(text, code == 5 ? "fake invalid usage" : "fake error");
  return text;
}
