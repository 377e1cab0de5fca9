/* Preloaded by runtime.restart.refuse.full: a disk that fills up, for the
 * checkpoint's rank files only (paths with "/ckpt-"), so that MPI's own
 * shared-memory files are not touched. A checkpoint rank file written with
 * fwrite may hold at most FULL_DISK_FILE_BYTES bytes; past that fwrite
 * writes nothing more and fails with ENOSPC, as on a full disk. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kFiles = 64 };
static struct {
  FILE* file;
  size_t written;
} watched[kFiles];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static size_t limit(void) {
  const char* text = getenv("FULL_DISK_FILE_BYTES");
  return text ? (size_t)strtoull(text, NULL, 10) : (size_t)-1;
}

static FILE* watch(FILE* file, const char* path) {
  if (!file || !strstr(path, "/ckpt-")) return file;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < kFiles; ++i)
    if (!watched[i].file) {
      watched[i].file = file;
      watched[i].written = 0;
      break;
    }
  pthread_mutex_unlock(&lock);
  return file;
}

FILE* fopen(const char* path, const char* mode) {
  FILE* (*real)(const char*, const char*);
  *(void**)&real = dlsym(RTLD_NEXT, "fopen");
  return watch(real(path, mode), path);
}

FILE* fopen64(const char* path, const char* mode) {
  FILE* (*real)(const char*, const char*);
  *(void**)&real = dlsym(RTLD_NEXT, "fopen64");
  return watch(real(path, mode), path);
}

size_t fwrite(const void* data, size_t size, size_t count, FILE* file) {
  size_t (*real)(const void*, size_t, size_t, FILE*);
  *(void**)&real = dlsym(RTLD_NEXT, "fwrite");
  pthread_mutex_lock(&lock);
  for (int i = 0; i < kFiles; ++i)
    if (watched[i].file == file) {
      if (watched[i].written + size * count > limit()) {
        pthread_mutex_unlock(&lock);
        errno = ENOSPC;
        return 0;
      }
      watched[i].written += size * count;
    }
  pthread_mutex_unlock(&lock);
  return real(data, size, count, file);
}

int fclose(FILE* file) {
  int (*real)(FILE*);
  *(void**)&real = dlsym(RTLD_NEXT, "fclose");
  pthread_mutex_lock(&lock);
  for (int i = 0; i < kFiles; ++i)
    if (watched[i].file == file) watched[i].file = NULL;
  pthread_mutex_unlock(&lock);
  return real(file);
}
