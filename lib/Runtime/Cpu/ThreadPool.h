//===- ThreadPool.h - Block-parallel CPU thread pool ----------------------===//
//
// Runs a kernel's linear block range over worker threads. Many launches may
// be in flight at once (one kernel handle is launched from many threads):
// each call enqueues a job that lives on the caller's stack, the caller works
// on its own job too (so a busy pool never stalls it), and returns once every
// chunk has run.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_LIB_RUNTIME_THREADPOOL_H
#define TILE_LIB_RUNTIME_THREADPOOL_H

#include "tile/Runtime/tile_abi.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace tile::rt {

class ThreadPool {
public:
  /// `threads` counts the calling thread: 1 means everything runs inline.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int size() const { return size_; }

  /// Runs fn(args, b, e, gx, gy, gz) over chunks covering [0, gx*gy*gz) and
  /// returns when all have finished.
  void run(tile_blocks_fn fn, void **args, int64_t gx, int64_t gy,
           int64_t gz);

  /// The process-wide pool: hardware threads, or TILE_NUM_THREADS if set.
  /// Created on first use and deliberately never destroyed (worker threads
  /// must not be joined from static destructors).
  static ThreadPool &global();

private:
  struct Job;
  void workerLoop();
  static void runChunk(Job &job, int64_t begin);

  int size_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job *> queue_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

} // namespace tile::rt

#endif // TILE_LIB_RUNTIME_THREADPOOL_H
