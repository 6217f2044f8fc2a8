//===- ThreadPool.cpp - Block-parallel CPU thread pool --------------------===//
#include "ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>

namespace tile::rt {

// One launch. Lives on the launching thread's stack: workers touch it only
// while it is in the queue (under mu_) or while they run one of its chunks
// (counted by `pending`), and the caller leaves only after both are over.
struct ThreadPool::Job {
  tile_blocks_fn fn;
  void **args;
  int64_t gx, gy, gz, total, chunk;
  std::atomic<int64_t> next{0};    // first unclaimed block
  std::atomic<int64_t> pending{0}; // chunks not yet finished
  std::mutex mu;
  std::condition_variable cv;
  bool done = false; // set under mu by whoever finishes the last chunk
};

ThreadPool::ThreadPool(int threads) : size_(std::max(1, threads)) {
  workers_.reserve(size_ - 1);
  for (int i = 1; i < size_; ++i)
    workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

ThreadPool &ThreadPool::global() {
  static ThreadPool *pool = [] {
    int n = static_cast<int>(std::thread::hardware_concurrency());
    if (const char *env = std::getenv("TILE_NUM_THREADS")) {
      char *end = nullptr;
      long v = std::strtol(env, &end, 10);
      if (end != env && *end == '\0' && v > 0 && v <= 4096)
        n = static_cast<int>(v);
    }
    return new ThreadPool(n > 0 ? n : 1);
  }();
  return *pool;
}

void ThreadPool::runChunk(Job &job, int64_t begin) {
  int64_t end = std::min(begin + job.chunk, job.total);
  job.fn(job.args, begin, end, job.gx, job.gy, job.gz);
  if (job.pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    std::lock_guard<std::mutex> lock(job.mu);
    job.done = true;
    job.cv.notify_one();
  }
}

void ThreadPool::workerLoop() {
  for (;;) {
    Job *job;
    int64_t begin;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (stop_)
        return;
      job = queue_.front();
      begin = job->next.fetch_add(job->chunk, std::memory_order_relaxed);
      // Fully claimed jobs leave the queue so nobody looks at them again.
      if (begin + job->chunk >= job->total)
        queue_.pop_front();
      if (begin >= job->total)
        continue;
    }
    runChunk(*job, begin);
  }
}

void ThreadPool::run(tile_blocks_fn fn, void **args, int64_t gx, int64_t gy,
                     int64_t gz) {
  const int64_t total = gx * gy * gz;
  if (total <= 0)
    return;
  if (total == 1 || size_ == 1) {
    fn(args, 0, total, gx, gy, gz);
    return;
  }
  // About four chunks per thread: enough slack to balance uneven blocks
  // without paying a claim per block.
  int64_t chunk = std::max<int64_t>(1, total / (int64_t(size_) * 4));
  int64_t nchunks = (total + chunk - 1) / chunk;
  Job job;
  job.fn = fn;
  job.args = args;
  job.gx = gx, job.gy = gy, job.gz = gz;
  job.total = total;
  job.chunk = chunk;
  job.pending.store(nchunks, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(&job);
  }
  if (nchunks - 1 >= int64_t(workers_.size()))
    cv_.notify_all();
  else
    for (int64_t i = 0; i < nchunks - 1; ++i)
      cv_.notify_one();

  // The caller claims chunks too; without the queue lock, since claiming is
  // one atomic add.
  bool finishedLast = false;
  for (;;) {
    int64_t begin = job.next.fetch_add(chunk, std::memory_order_relaxed);
    if (begin >= total)
      break;
    int64_t end = std::min(begin + chunk, total);
    fn(args, begin, end, gx, gy, gz);
    if (job.pending.fetch_sub(1, std::memory_order_acq_rel) == 1)
      finishedLast = true;
  }
  {
    // Everything is claimed; make sure the job is out of the queue before
    // this stack frame can go away.
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find(queue_.begin(), queue_.end(), &job);
    if (it != queue_.end())
      queue_.erase(it);
  }
  if (finishedLast)
    return;
  std::unique_lock<std::mutex> lock(job.mu);
  job.cv.wait(lock, [&] { return job.done; });
}

} // namespace tile::rt
