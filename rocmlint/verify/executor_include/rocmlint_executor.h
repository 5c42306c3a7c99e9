// rocmlint_executor.h: the CPU executor behind `rocmlint verify --run` (part of rocmlint).
//
// Runs a single-file HIP program, or a CUDA program as hipify leaves it, on the host CPU
// with waves of 64 or 32 lanes. docs/executor.md says what it models and what it does not.
//
// Execution model. Every thread of a block is a fiber with its own stack (a hand-written
// stack switch on x86-64, ucontext elsewhere); one OS thread runs the blocks of a grid one
// after another. The lanes of a wave access memory in lockstep: before each access a lane
// hands over to the next (see "lockstep"). A lane runs until its next memory access, a
// wave-wide operation (ballot, vote, shuffle, __activemask, __syncwarp, match), a block
// barrier, or its end. When no lane of a wave can
// run, the lanes waiting at the same operation (same source location) execute it together,
// and the operation sees exactly those lanes as active. Lanes waiting at different
// operations are divergent: the operation earliest in the source goes first (a branch body
// before the code after the branch). A barrier opens when every thread of the block that has
// not exited waits at the same __syncthreads; threads waiting at different barriers are a
// deadlock, stopped with a message. Fibers never run in parallel: atomics are atomic and
// every write is seen by every later read.
#ifndef ROCMLINT_EXECUTOR_H
#define ROCMLINT_EXECUTOR_H

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "rocmlint executor: compile the program as C++17 or newer"
#endif

// ---------------------------------------------------------------------------------------
// The AMD view: what hipcc defines for the device pass of one target (the one pass of this
// executor, so host code sees these too). Wave 64 models gfx942 (CDNA3), wave 32 gfx1100
// (RDNA3).
#ifndef ROCMLINT_WAVE_SIZE
#define ROCMLINT_WAVE_SIZE 64
#endif
#if ROCMLINT_WAVE_SIZE == 64
#define __GFX9__ 1
#define __gfx942__ 1
#define __AMDGCN_WAVEFRONT_SIZE 64
#define __AMDGCN_WAVEFRONT_SIZE__ 64
#elif ROCMLINT_WAVE_SIZE == 32
#define __GFX11__ 1
#define __gfx1100__ 1
#define __AMDGCN_WAVEFRONT_SIZE 32
#define __AMDGCN_WAVEFRONT_SIZE__ 32
#else
#error "rocmlint executor: ROCMLINT_WAVE_SIZE must be 64 or 32"
#endif
#define __HIP_PLATFORM_AMD__ 1
#define __HIP_PLATFORM_HCC__ 1
#define __HIPCC__ 1
#define __HIP__ 1
#define __HIP_DEVICE_COMPILE__ 1
#define __AMDGCN__ 1
#define HIP_VERSION_MAJOR 7
#define HIP_VERSION_MINOR 0
#define HIP_VERSION_PATCH 0
#define HIP_VERSION (HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 + HIP_VERSION_PATCH)

// The runner compiles programs with -fsanitize=thread for its instrumentation alone: the
// program's memory accesses call the lockstep hooks below. The executor's own code and the
// standard library it includes are not instrumented.
#pragma clang attribute push(__attribute__((no_sanitize("thread"))), apply_to = function)

#include <cfloat>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <tuple>
#include <cerrno>
#include <type_traits>
#include <utility>

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#if !defined(__x86_64__) || defined(ROCMLINT_EXECUTOR_UCONTEXT)
#define ROCMLINT_EXECUTOR_USE_UCONTEXT 1
#include <ucontext.h>
#endif

// Execution spaces and qualifiers: plain host C++ here. __shared__ is thread_local: a
// block-scope thread_local has static storage (one copy, shared by the block's fibers) and,
// unlike static, is valid after `extern` (dynamic shared memory, linked by the runner).
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __shared__ thread_local
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define HIP_KERNEL_NAME(...) __VA_ARGS__
#define HIP_SYMBOL(symbol) ::rocmlint_exec::symbol_address(symbol)
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];
#define HIP_DYNAMIC_SHARED_ATTRIBUTE
#define __trap() __builtin_trap()

namespace rocmlint_exec {

constexpr int kExitStopped = 70;           // the executor stopped the program (see stderr)
constexpr unsigned kMaxBlockThreads = 1024;
constexpr size_t kSharedMemoryBytes = 64 * 1024;
// Fresh device and dynamic shared memory: a large int (2139062143) and a large float (3.4e38),
// so that a read of memory never written shows in the result.
constexpr int kPoisonByte = 0x7F;

// Where a wave operation or barrier is called: two lanes at the same place are at the same
// operation. Captured by default arguments at the caller's call site.
struct Site {
  const char* file;
  unsigned line;
  unsigned column;
  static constexpr Site here(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE(),
                             unsigned column = __builtin_COLUMN()) {
    return Site{file, line, column};
  }
};

inline bool same_site(const Site& a, const Site& b) {
  return a.line == b.line && a.column == b.column && (a.file == b.file || std::strcmp(a.file, b.file) == 0);
}

inline bool earlier_site(const Site& a, const Site& b) {
  const int files = a.file == b.file ? 0 : std::strcmp(a.file, b.file);
  if (files != 0) return files < 0;
  return a.line != b.line ? a.line < b.line : a.column < b.column;
}

}  // namespace rocmlint_exec

// ---------------------------------------------------------------------------------------
// Index types. threadIdx & co. are references to the executor's state, which the scheduler
// updates whenever it switches lanes.
struct uint3 {
  unsigned x, y, z;
};

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};

#define ROCMLINT_VECTOR_TYPE(name, scalar, align)                        \
  struct __attribute__((aligned(align))) name##2 { scalar x, y; };       \
  struct name##3 { scalar x, y, z; };                                    \
  struct __attribute__((aligned(align * 2))) name##4 { scalar x, y, z, w; }; \
  inline name##2 make_##name##2(scalar x, scalar y) { return {x, y}; }   \
  inline name##3 make_##name##3(scalar x, scalar y, scalar z) { return {x, y, z}; } \
  inline name##4 make_##name##4(scalar x, scalar y, scalar z, scalar w) { return {x, y, z, w}; }
ROCMLINT_VECTOR_TYPE(float, float, 8)
ROCMLINT_VECTOR_TYPE(int, int, 8)
ROCMLINT_VECTOR_TYPE(double, double, 16)
struct __attribute__((aligned(8))) uint2 { unsigned x, y; };
struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return {x, y, z}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
#undef ROCMLINT_VECTOR_TYPE

// ---------------------------------------------------------------------------------------
// Runtime types (HIP names; the CUDA names hipify renames are mapped at the end).
enum hipError_t {
  hipSuccess = 0,
  hipErrorInvalidValue = 1,
  hipErrorOutOfMemory = 2,
  hipErrorInvalidConfiguration = 9,
  hipErrorInvalidDevicePointer = 17,
  hipErrorInvalidDevice = 101,
  hipErrorInvalidSymbol = 13,
  hipErrorNotSupported = 801,
};

enum hipMemcpyKind {
  hipMemcpyHostToHost = 0,
  hipMemcpyHostToDevice = 1,
  hipMemcpyDeviceToHost = 2,
  hipMemcpyDeviceToDevice = 3,
  hipMemcpyDefault = 4,
};

enum hipDeviceAttribute_t {
  hipDeviceAttributeMaxThreadsPerBlock,
  hipDeviceAttributeMaxBlockDimX,
  hipDeviceAttributeMaxBlockDimY,
  hipDeviceAttributeMaxBlockDimZ,
  hipDeviceAttributeMaxGridDimX,
  hipDeviceAttributeMaxGridDimY,
  hipDeviceAttributeMaxGridDimZ,
  hipDeviceAttributeMaxSharedMemoryPerBlock,
  hipDeviceAttributeWarpSize,
  hipDeviceAttributeMultiprocessorCount,
  hipDeviceAttributeComputeCapabilityMajor,
  hipDeviceAttributeComputeCapabilityMinor,
  hipDeviceAttributeClockRate,
};

struct hipDeviceProp_t {
  char name[256];
  char gcnArchName[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;
  int multiProcessorCount;
  int major;
  int minor;
  int maxThreadsPerMultiProcessor;
  int memoryClockRate;     // kHz, as MI300X reports it
  int memoryBusWidth;      // bits
  int l2CacheSize;
  size_t totalConstMem;
  int concurrentKernels;
  int pciBusID, pciDeviceID;
};

// hipHostMalloc flags (pinned memory is ordinary memory here)
enum { hipHostMallocDefault = 0, hipHostMallocPortable = 1, hipHostMallocMapped = 2, hipHostMallocWriteCombined = 4 };
enum { hipHostAllocDefault = 0, hipHostAllocPortable = 1, hipHostAllocMapped = 2, hipHostAllocWriteCombined = 4 };

struct rocmlint_stream {
  int unused;
};
typedef rocmlint_stream* hipStream_t;
struct rocmlint_event {
  double seconds;
};
typedef rocmlint_event* hipEvent_t;

// ---------------------------------------------------------------------------------------
namespace rocmlint_exec {
namespace detail {

enum class LaneState : unsigned char { Runnable, AtWaveOp, AtBarrier, Exited };
enum class Op : unsigned char {
  Shfl, ShflUp, ShflDown, ShflXor, Ballot, Any, All, ActiveMask, SyncWarp, MatchAny, MatchAll,
  Barrier, BarrierCount, BarrierAnd, BarrierOr,
};

inline const char* op_name(Op op) {
  static const char* const names[] = {"__shfl", "__shfl_up", "__shfl_down", "__shfl_xor", "__ballot", "__any",
                                      "__all", "__activemask", "__syncwarp", "__match_any", "__match_all",
                                      "__syncthreads", "__syncthreads_count", "__syncthreads_and",
                                      "__syncthreads_or"};
  return names[static_cast<int>(op)];
}

struct Lane {
  void* sp = nullptr;            // saved stack pointer while switched out
  LaneState state = LaneState::Exited;
  Op op = Op::Shfl;
  bool has_mask = false;         // a *_sync call: `mask` holds its mask
  Site site{};                   // where it waits
  const char* sync_name = nullptr;
  uint64_t value = 0;            // operand bits
  long long arg = 0;             // source lane, delta, lane mask or predicate
  int width = 0;
  uint64_t mask = 0;
  uint64_t result = 0;
  uint3 index{};
  unsigned linear = 0;
  char* stack_low = nullptr;     // lowest usable byte (the guard page lies below)
  char* stack_top = nullptr;
#ifdef ROCMLINT_EXECUTOR_USE_UCONTEXT
  ucontext_t* context = nullptr;
#endif
};

struct LaunchBody {
  void (*invoke)(const void* body);
  const void* body;
};

struct State {
  int wave_size = ROCMLINT_WAVE_SIZE;
  size_t stack_bytes = 256 * 1024;
  Lane* lanes = nullptr;
  unsigned lane_capacity = 0;
  Lane* current = nullptr;        // the lane running now, null in host code
  Lane* last_resumed = nullptr;   // the lane that ran last (the time limit names it)
  void* scheduler_sp = nullptr;
#ifdef ROCMLINT_EXECUTOR_USE_UCONTEXT
  ucontext_t scheduler_context;
#endif
  const LaunchBody* body = nullptr;
  const char* kernel = nullptr;   // the kernel running, for messages
  Site launch_site{};              // where the running kernel was launched
  uint3 thread_index{}, block_index{};
  dim3 block_dim{}, grid_dim{};
  hipError_t last_error = hipSuccess;
  struct Allocation {
    uintptr_t start;
    size_t bytes;
    Allocation* next;
    uintptr_t map_start;  // the mapping: a guard page, the buffer (its end at the second), a guard page
    size_t map_bytes;
    bool host_visible;    // managed or pinned host memory: the host reads it after a synchronize
  };
  Allocation* allocations = nullptr;  // device memory, to check copies against
  // The dynamic shared memory the running launch asked for, and the end of what exists
  uintptr_t dynamic_shared_start = 0, dynamic_shared_end = 0, dynamic_shared_limit = 0;
  // The program's static __shared__ arrays (thread-local symbols the runner lists in
  // ROCMLINT_SHARED_ARRAYS) and the span of thread-local storage they lie in: an access there
  // that no array holds is past the end of the one before it.
  struct SharedArray {
    uintptr_t start, end;
    char name[96];
  };
  SharedArray shared_arrays[64];
  int shared_array_count = -1;  // -1: not read yet
  // verify --run --compare: the kernels launched since the last copy to the host, and how many
  // times each copy site ran (ROCMLINT_COPY_LOG)
  char launched_since_copy[256] = "";
  char launched_kernels[64][128];  // every kernel launched so far (logged at its first launch)
  int launched_kernel_count = 0;
  bool launched_since_sync = false;
  struct CopySite {
    const char* file;
    unsigned line;
    unsigned count;
  };
  CopySite copy_sites[256];
  int copy_site_count = 0;
  uintptr_t shared_low = 0, shared_high = 0;
  double time_limit_s = 0;
  double started_s = 0;  // when the program started (a worker process re-arms the time limit from it)
  bool worker = false;   // a process running part of a launch's blocks (ROCMLINT_JOBS)
};

inline State g;

inline void configured_wave_size() {
  const char* text = std::getenv("ROCMLINT_WAVE_SIZE");
  int wave = ROCMLINT_WAVE_SIZE;
  if (text != nullptr && *text != '\0') {
    wave = std::atoi(text);
    if (wave != 64 && wave != 32) {
      std::fprintf(stderr, "rocmlint executor: ROCMLINT_WAVE_SIZE must be 64 or 32, not '%s'\n", text);
      std::_Exit(kExitStopped);
    }
  }
  g.wave_size = wave;
}

// Where the program is, for messages: the kernel, block and thread running now.
inline int describe_position(char* out, size_t size) {
  if (g.kernel == nullptr) return std::snprintf(out, size, "in host code");
  const int used = std::snprintf(out, size, "in kernel %s launched at %s:%u, block (%u,%u,%u)", g.kernel,
                                 g.launch_site.file, g.launch_site.line, g.block_index.x, g.block_index.y,
                                 g.block_index.z);
  if (g.current == nullptr || used < 0 || static_cast<size_t>(used) >= size) return used;
  const Lane& lane = *g.current;
  return used + std::snprintf(out + used, size - static_cast<size_t>(used), ", thread (%u,%u,%u) (wave %u, lane %u)",
                              lane.index.x, lane.index.y, lane.index.z, lane.linear / g.wave_size,
                              lane.linear % g.wave_size);
}

// Stops the program: the executor found something a GPU would hang, trap or fault on.
[[noreturn]] inline void stop(const char* format, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] inline void stop(const char* format, ...) {
  std::fflush(stdout);
  char where[512];
  describe_position(where, sizeof where);
  std::fprintf(stderr, "rocmlint executor: ");
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fprintf(stderr, " [%s]\n", where);
  std::fflush(stderr);
  std::_Exit(kExitStopped);
}

// ----- faults, traps and the time limit: a message naming the kernel, block and lane -----
inline bool in_guard_page(uintptr_t address) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (unsigned i = 0; i < g.lane_capacity; ++i) {
    const uintptr_t low = reinterpret_cast<uintptr_t>(g.lanes[i].stack_low);
    if (address < low && address + page >= low) return true;
  }
  return false;
}

// The device buffer whose guard page holds ``address`` (an access past its end or before its start).
inline const State::Allocation* guarding_buffer(uintptr_t address) {
  for (const State::Allocation* block = g.allocations; block != nullptr; block = block->next)
    if (address >= block->map_start && address < block->map_start + block->map_bytes &&
        (address < block->start || address >= block->start + block->bytes))
      return block;
  return nullptr;
}

inline void write_stderr(const char* text) {
  size_t length = std::strlen(text);
  while (length > 0) {
    const ssize_t written = ::write(2, text, length);
    if (written <= 0) return;
    text += written;
    length -= static_cast<size_t>(written);
  }
}

inline void on_signal(int signal, siginfo_t* info, void*) {
  char message[768];
  char where[512];
  if (signal == SIGALRM && g.current == nullptr && g.kernel != nullptr) g.current = g.last_resumed;
  describe_position(where, sizeof where);
  const uintptr_t address = reinterpret_cast<uintptr_t>(info->si_addr);
  switch (signal) {
    case SIGSEGV:
    case SIGBUS:
      if (g.current != nullptr && in_guard_page(address))
        std::snprintf(message, sizeof message,
                      "rocmlint executor: stack overflow of a lane (over %zu KiB; set ROCMLINT_STACK_KB) [%s]\n",
                      g.stack_bytes / 1024, where);
      else if (const State::Allocation* buffer = guarding_buffer(address))
        std::snprintf(message, sizeof message,
                      "rocmlint executor: out of bounds: byte offset %lld of a device buffer of %zu bytes "
                      "(hipMalloc'd at %p) [%s]\n",
                      static_cast<long long>(address) - static_cast<long long>(buffer->start), buffer->bytes,
                      reinterpret_cast<void*>(buffer->start), where);
      else
        std::snprintf(message, sizeof message, "rocmlint executor: memory access fault at address %p [%s]\n",
                      info->si_addr, where);
      break;
    case SIGILL:
    case SIGTRAP:
      std::snprintf(message, sizeof message, "rocmlint executor: a lane trapped (__builtin_trap, __trap) [%s]\n",
                    where);
      break;
    case SIGFPE:
      std::snprintf(message, sizeof message, "rocmlint executor: arithmetic fault (integer division by zero?) [%s]\n",
                    where);
      break;
    default:
      std::snprintf(message, sizeof message,
                    "rocmlint executor: time limit of %.0f s reached (a lane spinning on another lane or block never "
                    "lets the others run here) [%s]\n",
                    g.time_limit_s, where);
      break;
  }
  std::fflush(stdout);
  write_stderr(message);
  std::_Exit(kExitStopped);
}

inline double monotonic_seconds() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

inline void arm_time_limit(double seconds) {
  if (seconds <= 0) return;
  itimerval timer{};
  timer.it_value.tv_sec = static_cast<time_t>(seconds);
  timer.it_value.tv_usec = static_cast<suseconds_t>((seconds - static_cast<double>(timer.it_value.tv_sec)) * 1e6);
  if (timer.it_value.tv_sec == 0 && timer.it_value.tv_usec == 0) timer.it_value.tv_usec = 1;
  setitimer(ITIMER_REAL, &timer, nullptr);
}

inline bool install_handlers() {
  configured_wave_size();
  static char alternate_stack[64 * 1024];
  stack_t stack{};
  stack.ss_sp = alternate_stack;
  stack.ss_size = sizeof alternate_stack;
  sigaltstack(&stack, nullptr);
  struct sigaction action {};
  action.sa_sigaction = on_signal;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGALRM}) sigaction(signal, &action, nullptr);
  if (const char* kb = std::getenv("ROCMLINT_STACK_KB")) {
    const long value = std::atol(kb);
    if (value >= 16) g.stack_bytes = static_cast<size_t>(value) * 1024;
  }
  g.started_s = monotonic_seconds();
  if (const char* limit = std::getenv("ROCMLINT_TIME_LIMIT")) {
    g.time_limit_s = std::atof(limit);
    arm_time_limit(g.time_limit_s);
  }
  return true;
}

inline const bool handlers_installed = install_handlers();

// ----- fibers ---------------------------------------------------------------------------
extern "C" [[noreturn]] void rocmlint_exec_lane_main(Lane* lane);

#ifndef ROCMLINT_EXECUTOR_USE_UCONTEXT
// switch(save, load): pushes the callee-saved registers, saves the stack pointer in *save,
// takes `load` as the stack and pops the registers saved there. A new lane's stack holds
// zeros, its Lane* in r12's slot and lane_start as the return address.
extern "C" void rocmlint_exec_switch(void** save, void* load);
extern "C" void rocmlint_exec_lane_start();
asm(R"(
  .text
  .weak rocmlint_exec_switch
  .type rocmlint_exec_switch, @function
rocmlint_exec_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size rocmlint_exec_switch, .-rocmlint_exec_switch
  .weak rocmlint_exec_lane_start
  .type rocmlint_exec_lane_start, @function
rocmlint_exec_lane_start:
  movq %r12, %rdi
  call rocmlint_exec_lane_main
  ud2
  .size rocmlint_exec_lane_start, .-rocmlint_exec_lane_start
)");

inline void prepare_stack(Lane& lane) {
  void** slot = reinterpret_cast<void**>(lane.stack_top - 8);  // 16-aligned after `ret`
  *slot = reinterpret_cast<void*>(&rocmlint_exec_lane_start);
  slot -= 6;  // r15, r14, r13, r12, rbx, rbp
  for (int i = 0; i < 6; ++i) slot[i] = nullptr;
  slot[3] = &lane;
  lane.sp = slot;
}

inline void switch_to_lane(Lane& lane) { rocmlint_exec_switch(&g.scheduler_sp, lane.sp); }
inline void switch_to_scheduler(Lane& lane) { rocmlint_exec_switch(&lane.sp, g.scheduler_sp); }
#else
inline void ucontext_start() { rocmlint_exec_lane_main(g.current); }

inline void prepare_stack(Lane& lane) {
  if (lane.context == nullptr) lane.context = new ucontext_t;
  getcontext(lane.context);
  lane.context->uc_stack.ss_sp = lane.stack_low;
  lane.context->uc_stack.ss_size = static_cast<size_t>(lane.stack_top - lane.stack_low);
  lane.context->uc_link = nullptr;
  makecontext(lane.context, ucontext_start, 0);
}

inline void switch_to_lane(Lane& lane) { swapcontext(&g.scheduler_context, lane.context); }
inline void switch_to_scheduler(Lane& lane) { swapcontext(lane.context, &g.scheduler_context); }
#endif

inline void reserve_lanes(unsigned count) {
  if (count <= g.lane_capacity) return;
  Lane* lanes = new Lane[count];
  for (unsigned i = 0; i < g.lane_capacity; ++i) lanes[i] = g.lanes[i];  // keeps their stacks
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (unsigned i = g.lane_capacity; i < count; ++i) {
    void* memory = mmap(nullptr, g.stack_bytes + page, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (memory == MAP_FAILED) stop("cannot map a stack for lane %u", i);
    mprotect(memory, page, PROT_NONE);  // guard page: an overflow faults here
    lanes[i].stack_low = static_cast<char*>(memory) + page;
    lanes[i].stack_top = lanes[i].stack_low + g.stack_bytes;
  }
  delete[] g.lanes;
  g.lanes = lanes;
  g.lane_capacity = count;
}

inline void resume(Lane& lane) {
  g.current = g.last_resumed = &lane;
  g.thread_index = lane.index;
  switch_to_lane(lane);
  g.current = nullptr;
}

// ----- lockstep ---------------------------------------------------------------------------
// Before each memory access of the program (and each atomic) a lane in a kernel hands over to
// the next lane of its wave: the lanes make their accesses in lockstep, one round each, as a
// wave executes an instruction for all its lanes. Values exchanged through memory with no
// __syncwarp (warp-synchronous code) are then right, as on AMD GPUs. The hooks the
// instrumentation calls are at the end of this file.
inline void lockstep() {
  Lane* lane = g.current;
  if (lane != nullptr) switch_to_scheduler(*lane);
}

// The program's code address of an access, for the runner to turn into a line.
extern "C" {
extern const char __executable_start[] __attribute__((weak));  // the linker's: where the program is loaded
}
inline unsigned long long code_offset(const void* pc) {
  return static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(pc) - reinterpret_cast<uintptr_t>(__executable_start));
}

// An access among the static __shared__ arrays that no array holds (or that runs past the end of
// the one it starts in) went past the end of the array before it: through a pointer, where
// -fsanitize=array-bounds does not see the extent.
inline void check_static_shared(uintptr_t at, size_t bytes, const void* pc) {
  const State::SharedArray* before = nullptr;
  for (int i = 0; i < g.shared_array_count; ++i) {
    const State::SharedArray& array = g.shared_arrays[i];
    if (array.start <= at && (before == nullptr || array.start > before->start)) before = &array;
  }
  if (before == nullptr || at + bytes <= before->end) return;
  stop("out of bounds: a %zu-byte access at byte offset %llu of __shared__ %s (%llu bytes), past its end through a "
       "pointer [pc +0x%llx]",
       bytes, static_cast<unsigned long long>(at - before->start), before->name,
       static_cast<unsigned long long>(before->end - before->start), code_offset(pc));
}

// An access the instrumentation sees: past the dynamic shared memory the launch asked for (but
// inside what the executor holds) is out of bounds; then every access is a lockstep point.
inline void access(const void* address, size_t bytes, const void* pc = nullptr) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  if (at < g.shared_high && at >= g.shared_low && g.kernel != nullptr &&
      (at < g.dynamic_shared_start || at >= g.dynamic_shared_limit))
    check_static_shared(at, bytes, pc);
  if (at + bytes > g.dynamic_shared_end && at < g.dynamic_shared_limit && g.kernel != nullptr) {
    if (g.dynamic_shared_end == g.dynamic_shared_start) {  // nothing asked: a shared array overran into it
      check_static_shared(at, bytes, pc);                    // names the array before, where there is one
    }
    if (g.dynamic_shared_end == g.dynamic_shared_start)
      stop("out of bounds: an access lands in dynamic shared memory the launch did not ask for (byte offset %llu): "
           "a __shared__ array written or read past its end through a pointer",
           static_cast<unsigned long long>(at - g.dynamic_shared_start));
    stop("out of bounds: byte offset %llu of dynamic shared memory, %llu bytes at launch",
         static_cast<unsigned long long>(at - g.dynamic_shared_start),
         static_cast<unsigned long long>(g.dynamic_shared_end - g.dynamic_shared_start));
  }
  lockstep();
}

// ----- wave operations --------------------------------------------------------------------
inline uint64_t wave_bits(int wave) { return wave == 64 ? ~0ull : (1ull << wave) - 1; }

// Called by a lane: records the operation (a *_sync one with its name and mask), waits until
// its group has executed it.
inline uint64_t wave_op(Op op, uint64_t value, long long arg, int width, Site site, const char* sync_name = nullptr,
                        uint64_t mask = 0) {
  Lane& lane = *g.current;
  lane.op = op;
  lane.value = value;
  lane.arg = arg;
  lane.width = width;
  lane.site = site;
  lane.has_mask = sync_name != nullptr;
  lane.sync_name = sync_name;
  lane.mask = mask;
  lane.state = LaneState::AtWaveOp;
  switch_to_scheduler(lane);
  return lane.result;
}

inline void check_width(const Lane& lane) {
  const int width = lane.width;
  if (width <= 0 || (width & (width - 1)) != 0 || width > 64)
    stop("%s at %s:%u: width %d is not a power of two from 1 to 64", op_name(lane.op), lane.site.file,
         lane.site.line, width);
}

// The lane whose value a shuffle reads, as HIP computes it (ds_bpermute wraps to the wave).
inline unsigned shuffle_source(const Lane& lane, unsigned self, int wave) {
  check_width(lane);
  const long long width = lane.width;
  const long long me = self;
  const long long segment = me & ~(width - 1);
  long long source = me;
  switch (lane.op) {
    case Op::Shfl:
      source = (lane.arg & (width - 1)) + segment;
      break;
    case Op::ShflUp:
      source = me - static_cast<unsigned>(lane.arg);
      if (source < segment) source = me;
      break;
    case Op::ShflDown:
      source = me + static_cast<unsigned>(lane.arg);
      if ((me & (width - 1)) + static_cast<unsigned>(lane.arg) >= width) source = me;
      break;
    default:  // ShflXor: later segments are out of reach, earlier ones are not
      source = me ^ lane.arg;
      if (source >= ((me + width) & ~(width - 1))) source = me;
      break;
  }
  return static_cast<unsigned>(source) & static_cast<unsigned>(wave - 1);
}

// HIP 6.2+ *_sync semantics: on wave32 the mask's upper half is ignored; each lane must be in
// its mask, and the lanes that pass one mask value must be exactly that mask (HIP traps
// when this fails, in builds without NDEBUG).
inline void check_sync_masks(Lane* const* group, unsigned count, int wave) {
  if (wave == 32)
    for (unsigned i = 0; i < count; ++i) group[i]->mask &= 0xffffffffull;
#ifndef NDEBUG
  const char* const rule =
      "HIP 6.2+ traps here in a build without NDEBUG: each calling lane must be in its mask, and every lane "
      "the mask names must call with the same mask";
  for (int pass = 0; pass < 2; ++pass)
    for (unsigned i = 0; i < count; ++i) {
      const Lane& lane = *group[i];
      const unsigned self = lane.linear % wave;
      uint64_t same = 0;
      for (unsigned j = 0; j < count; ++j)
        if (group[j]->mask == lane.mask) same |= 1ull << (group[j]->linear % wave);
      const bool outside = ((lane.mask >> self) & 1) == 0;
      if (pass == 0 ? !outside : same == lane.mask) continue;
      g.current = group[i];
      g.thread_index = lane.index;
      if (outside)
        stop("%s at %s:%u: lane %u calls it with mask 0x%016llx, which leaves it out (%s)", lane.sync_name,
             lane.site.file, lane.site.line, self, static_cast<unsigned long long>(lane.mask), rule);
      stop("%s at %s:%u: the lanes calling it with mask 0x%016llx are 0x%016llx (%s)", lane.sync_name,
           lane.site.file, lane.site.line, static_cast<unsigned long long>(lane.mask),
           static_cast<unsigned long long>(same), rule);
    }
#endif
}

// Executes one operation for the lanes in `group` (all at the same place), wave `wave`.
inline void execute(Lane* const* group, unsigned count, int wave) {
  Lane* by_lane[64] = {};
  uint64_t active = 0;
  for (unsigned i = 0; i < count; ++i) {
    const unsigned self = group[i]->linear % wave;
    by_lane[self] = group[i];
    active |= 1ull << self;
  }
  const Op op = group[0]->op;
  if (group[0]->has_mask) check_sync_masks(group, count, wave);
  switch (op) {
    case Op::Shfl:
    case Op::ShflUp:
    case Op::ShflDown:
    case Op::ShflXor:
      for (unsigned i = 0; i < count; ++i) {
        Lane& lane = *group[i];
        const Lane* source = by_lane[shuffle_source(lane, lane.linear % wave, wave)];
        lane.result = source != nullptr ? source->value : 0;  // an inactive lane reads as 0
      }
      return;
    case Op::Ballot:
    case Op::Any:
    case Op::All: {
      uint64_t votes = 0;
      for (unsigned i = 0; i < count; ++i)
        if (group[i]->arg != 0) votes |= 1ull << (group[i]->linear % wave);
      for (unsigned i = 0; i < count; ++i) {
        Lane& lane = *group[i];
        const uint64_t scope = lane.has_mask ? lane.mask : active;
        const uint64_t mine = votes & scope;
        lane.result = op == Op::Ballot ? mine : op == Op::Any ? (mine != 0) : (mine == scope);
      }
      return;
    }
    case Op::MatchAny:
    case Op::MatchAll:
      for (unsigned i = 0; i < count; ++i) {
        Lane& lane = *group[i];
        const uint64_t scope = lane.has_mask ? lane.mask : active;
        uint64_t equal = 0;
        for (unsigned j = 0; j < count; ++j)
          if (group[j]->value == lane.value) equal |= 1ull << (group[j]->linear % wave);
        equal &= scope;
        lane.result = op == Op::MatchAny ? equal : (equal == scope ? scope : 0);
      }
      return;
    default:  // ActiveMask, SyncWarp
      for (unsigned i = 0; i < count; ++i) group[i]->result = active;
      return;
  }
}

// Runs the lanes of one wave until each has exited or waits at a barrier: rounds in which
// every runnable lane goes on to its next memory access (lockstep) or wave operation.
inline void run_wave(Lane* lanes, unsigned count, int wave) {
  Lane* group[64];
  for (;;) {
    bool runnable = false;
    for (unsigned i = 0; i < count; ++i)
      if (lanes[i].state == LaneState::Runnable) {
        resume(lanes[i]);
        runnable |= lanes[i].state == LaneState::Runnable;
      }
    if (runnable) continue;
    const Lane* first = nullptr;
    for (unsigned i = 0; i < count; ++i) {
      const Lane& lane = lanes[i];
      if (lane.state != LaneState::AtWaveOp) continue;
      if (first == nullptr || (!same_site(lane.site, first->site) && earlier_site(lane.site, first->site)))
        first = &lane;
    }
    if (first == nullptr) return;
    unsigned size = 0;
    for (unsigned i = 0; i < count; ++i) {
      Lane& lane = lanes[i];
      if (lane.state == LaneState::AtWaveOp && lane.op == first->op && same_site(lane.site, first->site))
        group[size++] = &lane;
    }
    execute(group, size, wave);
    for (unsigned i = 0; i < size; ++i) group[i]->state = LaneState::Runnable;
  }
}

[[noreturn]] inline void report_deadlock(unsigned threads) {
  struct Place {
    const Lane* lane;
    unsigned waiting;
  };
  Place places[8];
  unsigned distinct = 0, others = 0;
  for (unsigned i = 0; i < threads; ++i) {
    const Lane& lane = g.lanes[i];
    if (lane.state != LaneState::AtBarrier) continue;
    unsigned k = 0;
    while (k < distinct && !same_site(places[k].lane->site, lane.site)) ++k;
    if (k < distinct) {
      ++places[k].waiting;
    } else if (distinct < 8) {
      places[distinct++] = Place{&lane, 1};
    } else {
      ++others;
    }
  }
  char detail[1024];
  int used = 0;
  for (unsigned k = 0; k < distinct && used < static_cast<int>(sizeof detail) - 1; ++k) {
    const Lane& lane = *places[k].lane;
    used += std::snprintf(detail + used, sizeof detail - static_cast<size_t>(used),
                          "%s%u thread(s) at %s (%s:%u, first: thread (%u,%u,%u))", k ? "; " : "", places[k].waiting,
                          op_name(lane.op), lane.site.file, lane.site.line, lane.index.x, lane.index.y, lane.index.z);
  }
  stop("deadlock: the threads of the block wait at different barriers: %s%s. A barrier under a branch that not "
       "every thread of the block takes never opens (undefined behaviour in HIP and CUDA)",
       detail, others ? "; ..." : "");
}

inline void open_barrier(unsigned threads) {
  const Op op = [&] {
    for (unsigned i = 0; i < threads; ++i)
      if (g.lanes[i].state == LaneState::AtBarrier) return g.lanes[i].op;
    return Op::Barrier;
  }();
  uint64_t count = 0, all = 1, any = 0;
  for (unsigned i = 0; i < threads; ++i) {
    const Lane& lane = g.lanes[i];
    if (lane.state != LaneState::AtBarrier) continue;
    count += lane.arg != 0;
    all &= lane.arg != 0;
    any |= lane.arg != 0;
  }
  const uint64_t result = op == Op::BarrierCount ? count : op == Op::BarrierAnd ? all : any;
  for (unsigned i = 0; i < threads; ++i) {
    Lane& lane = g.lanes[i];
    if (lane.state != LaneState::AtBarrier) continue;
    lane.result = result;
    lane.state = LaneState::Runnable;
  }
}

inline void run_block(unsigned threads) {
  const int wave = g.wave_size;
  for (unsigned i = 0; i < threads; ++i) {
    Lane& lane = g.lanes[i];
    lane.linear = i;
    lane.index = uint3{i % g.block_dim.x, (i / g.block_dim.x) % g.block_dim.y, i / (g.block_dim.x * g.block_dim.y)};
    lane.state = LaneState::Runnable;
    prepare_stack(lane);
  }
  for (;;) {
    for (unsigned start = 0; start < threads; start += static_cast<unsigned>(wave))
      run_wave(g.lanes + start, threads - start < static_cast<unsigned>(wave) ? threads - start : wave, wave);
    const Lane* waiting = nullptr;
    bool divergent = false;
    for (unsigned i = 0; i < threads; ++i) {
      const Lane& lane = g.lanes[i];
      if (lane.state != LaneState::AtBarrier) continue;
      if (waiting == nullptr) waiting = &lane;
      else if (!same_site(lane.site, waiting->site)) divergent = true;
    }
    if (waiting == nullptr) return;  // every thread has exited
    if (divergent) report_deadlock(threads);
    open_barrier(threads);
  }
}

extern "C" [[noreturn]] __attribute__((weak)) void rocmlint_exec_lane_main(Lane* lane) {
  g.body->invoke(g.body->body);
  lane->state = LaneState::Exited;
  switch_to_scheduler(*lane);
  __builtin_unreachable();
}

inline bool valid_launch(dim3 grid, dim3 block, size_t shared_bytes) {
  const unsigned long long threads = 1ull * block.x * block.y * block.z;
  return grid.x > 0 && grid.y > 0 && grid.z > 0 && grid.y <= 65535 && grid.z <= 65535 && threads > 0 &&
         threads <= kMaxBlockThreads && block.z <= 1024 && shared_bytes <= kSharedMemoryBytes;
}

}  // namespace detail

// Dynamic shared memory: every `extern __shared__` array of the program is linked to this
// buffer (the runner passes --defsym for each; see rocmlint/verify/executor.py).
extern "C" {
alignas(256) inline thread_local unsigned char rocmlint_dynamic_shared[kSharedMemoryBytes];
}

// Blocks [first, last) of a launch, in the order a sequential run takes them (x fastest).
inline void run_blocks(dim3 grid, unsigned threads, size_t first, size_t last) {
  using namespace detail;
  for (size_t linear = first; linear < last; ++linear) {
    g.block_index = uint3{static_cast<unsigned>(linear % grid.x), static_cast<unsigned>(linear / grid.x % grid.y),
                          static_cast<unsigned>(linear / (static_cast<size_t>(grid.x) * grid.y))};
    std::memset(rocmlint_dynamic_shared, kPoisonByte, sizeof rocmlint_dynamic_shared);  // unwritten memory shows up
    run_block(threads);
  }
}

// ROCMLINT_JOBS (set by the runner for programs whose kernels write only device memory): the
// processes a large launch is split over; 1 (the default) runs every block here.
constexpr size_t kParallelThreads = 1 << 15;
inline int parallel_jobs() {
  static const int jobs = [] {
    const char* text = std::getenv("ROCMLINT_JOBS");
    const int value = text != nullptr ? std::atoi(text) : 1;
    return value < 1 ? 1 : value > 64 ? 64 : value;
  }();
  return jobs;
}

// Blocks do not wait on each other (a block that spins on another is undefined in HIP), so a
// large launch is split into contiguous runs of blocks, each in a forked worker process: device
// memory is shared (MAP_SHARED), __shared__ and the fibers are each worker's own, atomics are
// real atomics. Each worker's output goes to a file, replayed in block order, so the output
// is what a sequential run prints; the first worker (in block order) that stops ends the run
// with its status, as the sequential run would have at that block.
inline void run_blocks_in_processes(dim3 grid, unsigned threads, size_t blocks, int jobs) {
  using namespace detail;
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t workers[64];
  FILE* outputs[64];
  int started = 0;
  for (int k = 0; k < jobs; ++k) {
    const size_t first = blocks * static_cast<size_t>(k) / static_cast<size_t>(jobs);
    const size_t last = blocks * static_cast<size_t>(k + 1) / static_cast<size_t>(jobs);
    outputs[k] = std::tmpfile();
    const pid_t pid = outputs[k] != nullptr ? fork() : -1;
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // a parent stopped by the time limit takes its workers along
      dup2(fileno(outputs[k]), STDOUT_FILENO);
      dup2(fileno(outputs[k]), STDERR_FILENO);
      g.worker = true;
      arm_time_limit(g.time_limit_s > 0 ? g.time_limit_s - (monotonic_seconds() - g.started_s) : 0);
      run_blocks(grid, threads, first, last);
      std::fflush(stdout);
      std::fflush(stderr);
      std::_Exit(0);
    }
    if (pid < 0) {  // no process to spare: this run of blocks and the rest run here, after the others
      if (outputs[k] != nullptr) std::fclose(outputs[k]);
      break;
    }
    workers[started++] = pid;
  }
  int failed_status = 0;
  for (int k = 0; k < started; ++k) {
    int status = 0;
    while (waitpid(workers[k], &status, 0) < 0 && errno == EINTR) {
    }
    std::fflush(stdout);
    std::rewind(outputs[k]);
    char chunk[65536];
    for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, outputs[k])) > 0;) {
      if (std::fwrite(chunk, 1, n, stdout) != n) break;
    }
    std::fclose(outputs[k]);
    std::fflush(stdout);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      failed_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      for (int rest = k + 1; rest < started; ++rest) kill(workers[rest], SIGKILL);
      std::_Exit(failed_status);
    }
  }
  if (started < jobs) run_blocks(grid, threads, blocks * static_cast<size_t>(started) / static_cast<size_t>(jobs), blocks);
}

// ROCMLINT_SHARED_ARRAYS: "ANCHOR;OFFSET:BYTES:NAME;..." with the thread-local offsets of the
// dynamic shared buffer (ANCHOR) and of each static __shared__ array, from the symbol table.
inline void read_shared_arrays() {
  using namespace detail;
  g.shared_array_count = 0;
  const char* text = std::getenv("ROCMLINT_SHARED_ARRAYS");
  if (text == nullptr || *text == '\0') return;
  char* end = nullptr;
  const unsigned long long anchor = std::strtoull(text, &end, 10);
  const uintptr_t base = reinterpret_cast<uintptr_t>(rocmlint_dynamic_shared) - anchor;
  uintptr_t low = UINTPTR_MAX, high = 0;
  while (end != nullptr && *end == ';' && g.shared_array_count < 64) {
    const unsigned long long offset = std::strtoull(end + 1, &end, 10);
    if (*end != ':') break;
    const unsigned long long bytes = std::strtoull(end + 1, &end, 10);
    if (*end != ':') break;
    const char* name = end + 1;
    const char* stop_at = std::strchr(name, ';');
    const size_t length = stop_at != nullptr ? static_cast<size_t>(stop_at - name) : std::strlen(name);
    State::SharedArray& array = g.shared_arrays[g.shared_array_count++];
    array.start = base + offset;
    array.end = array.start + bytes;
    std::snprintf(array.name, sizeof array.name, "%.*s", static_cast<int>(length), name);
    low = array.start < low ? array.start : low;
    high = array.end + 256 > high ? array.end + 256 : high;  // the padding after the last one too
    end = const_cast<char*>(name + length);
  }
  if (g.shared_array_count > 0) g.shared_low = low, g.shared_high = high;
}

namespace detail {
inline void note_launch(const char* name);  // the copy log, below
}

// Runs a kernel: `body` calls it with the launch's arguments, once per lane.
inline void run_kernel(const char* name, Site site, dim3 grid, dim3 block, size_t shared_bytes,
                       const detail::LaunchBody& body) {
  using namespace detail;
  if (g.kernel != nullptr) stop("kernel %s launched kernel %s (dynamic parallelism is not modelled)", g.kernel, name);
  if (!valid_launch(grid, block, shared_bytes)) {
    g.last_error = hipErrorInvalidConfiguration;
    return;
  }
  const unsigned threads = block.x * block.y * block.z;
  reserve_lanes(threads);
  g.body = &body;
  g.kernel = name;
  note_launch(name);
  g.launch_site = site;
  g.grid_dim = grid;
  g.block_dim = block;
  g.dynamic_shared_start = reinterpret_cast<uintptr_t>(rocmlint_dynamic_shared);
  g.dynamic_shared_end = g.dynamic_shared_start + shared_bytes;
  g.dynamic_shared_limit = g.dynamic_shared_start + sizeof rocmlint_dynamic_shared;
  if (g.shared_array_count < 0) read_shared_arrays();
  const size_t blocks = static_cast<size_t>(grid.x) * grid.y * grid.z;
  const int jobs = parallel_jobs();
  if (jobs > 1 && !g.worker && blocks >= 2 * static_cast<size_t>(jobs) && blocks * threads >= kParallelThreads)
    run_blocks_in_processes(grid, threads, blocks, jobs);
  else
    run_blocks(grid, threads, 0, blocks);
  g.kernel = nullptr;
  g.body = nullptr;
}

template <class Body>
class Launcher {
 public:
  Launcher(const char* name, Site site, Body body, dim3 grid, dim3 block, size_t shared_bytes)
      : name_(name), site_(site), body_(body), grid_(grid), block_(block), shared_bytes_(shared_bytes) {}

  template <class... Args>
  void operator()(Args&&... args) const {
    const std::tuple<std::decay_t<Args>...> stored(std::forward<Args>(args)...);
    struct Call {
      const Body* body;
      const std::tuple<std::decay_t<Args>...>* args;
    } call{&body_, &stored};
    const detail::LaunchBody launch{[](const void* raw) {
                                      const Call& c = *static_cast<const Call*>(raw);
                                      std::apply(*c.body, *c.args);
                                    },
                                    &call};
    run_kernel(name_, site_, grid_, block_, shared_bytes_, launch);
  }

 private:
  const char* name_;
  Site site_;
  Body body_;
  dim3 grid_, block_;
  size_t shared_bytes_;
};

// `kernel<<<grid, block, shared, stream>>>(args)` is rewritten by the runner into
// `::rocmlint_exec::launch("kernel", Site, [&](auto&&... a) { kernel(a...); }, grid, block, ...)(args)`.
template <class Body>
Launcher<Body> launch(const char* name, Site site, Body body, dim3 grid, dim3 block, size_t shared_bytes = 0) {
  return Launcher<Body>(name, site, body, grid, block, shared_bytes);
}
template <class Body, class Stream>
Launcher<Body> launch(const char* name, Site site, Body body, dim3 grid, dim3 block, size_t shared_bytes, Stream) {
  return Launcher<Body>(name, site, body, grid, block, shared_bytes);
}

template <class T>
struct SymbolAddress {
  T* address;
};
template <class T>
SymbolAddress<T> symbol_address(T& symbol) {
  return SymbolAddress<T>{&symbol};
}

}  // namespace rocmlint_exec

// ---------------------------------------------------------------------------------------
// Indices and the wave size.
inline const uint3& threadIdx = ::rocmlint_exec::detail::g.thread_index;
inline const uint3& blockIdx = ::rocmlint_exec::detail::g.block_index;
inline const dim3& blockDim = ::rocmlint_exec::detail::g.block_dim;
inline const dim3& gridDim = ::rocmlint_exec::detail::g.grid_dim;

// warpSize, as from ROCm 7: a device-side run-time value, not a constant expression (array
// bounds, template arguments and static_assert that use it do not compile), and host code
// that reads it is stopped (the host asks the device: hipDeviceGetAttribute).
struct rocmlint_warp_size {
  constexpr rocmlint_warp_size() = default;
  rocmlint_warp_size(const rocmlint_warp_size&) {}  // not trivial: printf("%d", warpSize) does not compile
  operator int() const {
    using namespace ::rocmlint_exec::detail;
    if (g.current == nullptr)
      stop("warpSize read by host code: HIP 7 defines it for device code only; the host asks the device "
           "(hipDeviceGetAttribute(&size, hipDeviceAttributeWarpSize, device))");
    return g.wave_size;
  }
};
inline constexpr rocmlint_warp_size warpSize{};

#define hipThreadIdx_x (threadIdx.x)
#define hipThreadIdx_y (threadIdx.y)
#define hipThreadIdx_z (threadIdx.z)
#define hipBlockIdx_x (blockIdx.x)
#define hipBlockIdx_y (blockIdx.y)
#define hipBlockIdx_z (blockIdx.z)
#define hipBlockDim_x (blockDim.x)
#define hipBlockDim_y (blockDim.y)
#define hipBlockDim_z (blockDim.z)
#define hipGridDim_x (gridDim.x)
#define hipGridDim_y (gridDim.y)
#define hipGridDim_z (gridDim.z)

#define __builtin_amdgcn_wavefrontsize() (warpSize)

inline unsigned __lane_id() {
  const auto* lane = ::rocmlint_exec::detail::g.current;
  return lane != nullptr ? lane->linear % static_cast<unsigned>(::rocmlint_exec::detail::g.wave_size) : 0;
}

inline unsigned long long __lanemask_eq() { return 1ull << __lane_id(); }
inline unsigned long long __lanemask_lt() { return (1ull << __lane_id()) - 1; }
inline unsigned long long __lanemask_le() { return __lanemask_lt() | __lanemask_eq(); }
inline unsigned long long __lanemask_gt() {
  return ~__lanemask_le() & ::rocmlint_exec::detail::wave_bits(::rocmlint_exec::detail::g.wave_size);
}
inline unsigned long long __lanemask_ge() {
  return ~__lanemask_lt() & ::rocmlint_exec::detail::wave_bits(::rocmlint_exec::detail::g.wave_size);
}

// ----- wave operations: the wave's active lanes, as HIP documents them -------------------
namespace rocmlint_exec {
namespace detail {
template <class T>
uint64_t to_bits(const T& value) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8,
                "rocmlint executor: shuffles move trivially copyable values of at most 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}
template <class T>
T from_bits(uint64_t bits) {
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}
template <class Mask>
constexpr void require_64bit_mask() {
  static_assert(std::is_integral<Mask>::value && sizeof(Mask) == 8,
                "rocmlint executor (as HIP 6.2+): the mask of a *_sync function must be a 64-bit integer; a 32-bit "
                "mask such as 0xffffffff names lanes 0-31 only (use a 64-bit mask, __activemask(), or the non-sync "
                "function)");
}
}  // namespace detail
}  // namespace rocmlint_exec

inline unsigned long long __ballot(int predicate, ::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {
  return ::rocmlint_exec::detail::wave_op(::rocmlint_exec::detail::Op::Ballot, 0, predicate != 0, 0, site);
}
inline unsigned long long __ballot64(int predicate, ::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {
  return __ballot(predicate, site);
}
inline int __any(int predicate, ::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {
  return static_cast<int>(
      ::rocmlint_exec::detail::wave_op(::rocmlint_exec::detail::Op::Any, 0, predicate != 0, 0, site));
}
inline int __all(int predicate, ::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {
  return static_cast<int>(
      ::rocmlint_exec::detail::wave_op(::rocmlint_exec::detail::Op::All, 0, predicate != 0, 0, site));
}
inline unsigned long long __activemask(::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {
  return ::rocmlint_exec::detail::wave_op(::rocmlint_exec::detail::Op::ActiveMask, 0, 0, 0, site);
}

#define ROCMLINT_SHUFFLE(name, op, Arg)                                                                       \
  template <class T>                                                                                          \
  T name(T var, Arg arg, int width = warpSize, ::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) { \
    using namespace ::rocmlint_exec::detail;                                                                  \
    return from_bits<T>(wave_op(Op::op, to_bits(var), static_cast<long long>(arg), width, site));             \
  }                                                                                                           \
  template <class Mask, class T>                                                                              \
  T name##_sync(Mask mask, T var, Arg arg, int width = warpSize,                                              \
                ::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {                                 \
    using namespace ::rocmlint_exec::detail;                                                                  \
    require_64bit_mask<Mask>();                                                                               \
    return from_bits<T>(wave_op(Op::op, to_bits(var), static_cast<long long>(arg), width, site, #name "_sync",   \
                                static_cast<uint64_t>(mask)));                                                \
  }
ROCMLINT_SHUFFLE(__shfl, Shfl, int)
ROCMLINT_SHUFFLE(__shfl_up, ShflUp, unsigned)
ROCMLINT_SHUFFLE(__shfl_down, ShflDown, unsigned)
ROCMLINT_SHUFFLE(__shfl_xor, ShflXor, int)
#undef ROCMLINT_SHUFFLE

template <class Mask>
unsigned long long __ballot_sync(Mask mask, int predicate, ::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {
  using namespace ::rocmlint_exec::detail;
  require_64bit_mask<Mask>();
  return wave_op(Op::Ballot, 0, predicate != 0, 0, site, "__ballot_sync", static_cast<uint64_t>(mask));
}
template <class Mask>
int __any_sync(Mask mask, int predicate, ::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {
  using namespace ::rocmlint_exec::detail;
  require_64bit_mask<Mask>();
  return static_cast<int>(wave_op(Op::Any, 0, predicate != 0, 0, site, "__any_sync", static_cast<uint64_t>(mask)));
}
template <class Mask>
int __all_sync(Mask mask, int predicate, ::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {
  using namespace ::rocmlint_exec::detail;
  require_64bit_mask<Mask>();
  return static_cast<int>(wave_op(Op::All, 0, predicate != 0, 0, site, "__all_sync", static_cast<uint64_t>(mask)));
}
template <class T>
unsigned long long __match_any(T value, ::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {
  using namespace ::rocmlint_exec::detail;
  return wave_op(Op::MatchAny, to_bits(value), 0, 0, site);
}
template <class Mask, class T>
unsigned long long __match_any_sync(Mask mask, T value, ::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {
  using namespace ::rocmlint_exec::detail;
  require_64bit_mask<Mask>();
  return wave_op(Op::MatchAny, to_bits(value), 0, 0, site, "__match_any_sync", static_cast<uint64_t>(mask));
}
template <class T>
unsigned long long __match_all(T value, int* predicate, ::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {
  using namespace ::rocmlint_exec::detail;
  const uint64_t lanes = wave_op(Op::MatchAll, to_bits(value), 0, 0, site);
  *predicate = lanes != 0;
  return lanes;
}
template <class Mask, class T>
unsigned long long __match_all_sync(Mask mask, T value, int* predicate,
                                    ::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {
  using namespace ::rocmlint_exec::detail;
  require_64bit_mask<Mask>();
  const uint64_t lanes =
      wave_op(Op::MatchAll, to_bits(value), 0, 0, site, "__match_all_sync", static_cast<uint64_t>(mask));
  *predicate = lanes != 0;
  return lanes;
}

// __syncwarp: the wave's lanes meet (what they wrote before is seen after).
inline void __syncwarp(::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {
  ::rocmlint_exec::detail::wave_op(::rocmlint_exec::detail::Op::SyncWarp, 0, 0, 0, site);
}
template <class Mask>
void __syncwarp(Mask mask, ::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {
  using namespace ::rocmlint_exec::detail;
  require_64bit_mask<Mask>();
  wave_op(Op::SyncWarp, 0, 0, 0, site, "__syncwarp", static_cast<uint64_t>(mask));
}

// ----- block barriers ----------------------------------------------------------------------
namespace rocmlint_exec {
namespace detail {
inline uint64_t barrier(Op op, int predicate, Site site) {
  Lane* lane = g.current;
  if (lane == nullptr) stop("%s called from host code", op_name(op));
  lane->op = op;
  lane->arg = predicate != 0;
  lane->site = site;
  lane->state = LaneState::AtBarrier;
  switch_to_scheduler(*lane);
  return lane->result;
}
}  // namespace detail
}  // namespace rocmlint_exec

inline void __syncthreads(::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {
  ::rocmlint_exec::detail::barrier(::rocmlint_exec::detail::Op::Barrier, 0, site);
}
inline int __syncthreads_count(int predicate, ::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {
  return static_cast<int>(::rocmlint_exec::detail::barrier(::rocmlint_exec::detail::Op::BarrierCount, predicate, site));
}
inline int __syncthreads_and(int predicate, ::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {
  return static_cast<int>(::rocmlint_exec::detail::barrier(::rocmlint_exec::detail::Op::BarrierAnd, predicate, site));
}
inline int __syncthreads_or(int predicate, ::rocmlint_exec::Site site = ::rocmlint_exec::Site::here()) {
  return static_cast<int>(::rocmlint_exec::detail::barrier(::rocmlint_exec::detail::Op::BarrierOr, predicate, site));
}
// One thread runs at a time and sees every earlier write: fences order nothing more here.
inline void __threadfence() {}
inline void __threadfence_block() {}
inline void __threadfence_system() {}

// ----- bit and integer intrinsics (HIP's signatures: a 64-bit mask passed to __popc is
// truncated to its low 32 bits, as on the GPU) ----------------------------------------------
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(unsigned x) { return __builtin_ffs(static_cast<int>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(unsigned long long x) { return __builtin_ffsll(static_cast<long long>(x)); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline unsigned __brev(unsigned x) { return __builtin_bitreverse32(x); }
inline unsigned long long __brevll(unsigned long long x) { return __builtin_bitreverse64(x); }
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned selector) {
  const unsigned long long bytes = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned result = 0;
  for (int k = 0; k < 4; ++k) result |= static_cast<unsigned>((bytes >> (8 * ((selector >> (4 * k)) & 7u))) & 0xffu) << (8 * k);
  return result;
}
inline int __mul24(int x, int y) { return ((x << 8) >> 8) * ((y << 8) >> 8); }
inline unsigned __umul24(unsigned x, unsigned y) { return (x & 0xffffffu) * (y & 0xffffffu); }
inline int __mulhi(int x, int y) { return static_cast<int>((static_cast<long long>(x) * y) >> 32); }
inline unsigned __umulhi(unsigned x, unsigned y) { return static_cast<unsigned>((1ull * x * y) >> 32); }
inline long long __mul64hi(long long x, long long y) { return static_cast<long long>((static_cast<__int128>(x) * y) >> 64); }
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(x) * y) >> 64);
}
template <class T>
T __ldg(const T* pointer) {
  return *pointer;
}

// min/max for device code, as HIP declares them.
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }

// Fast-math and conversion intrinsics: the exact functions here.
inline float __fdividef(float x, float y) { return x / y; }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __powf(float x, float y) { return std::pow(x, y); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fmaf_rn(float x, float y, float z) { return std::fma(x, y, z); }
inline int __float_as_int(float x) { return ::rocmlint_exec::detail::from_bits<int>(::rocmlint_exec::detail::to_bits(x)); }
inline unsigned __float_as_uint(float x) { return ::rocmlint_exec::detail::from_bits<unsigned>(::rocmlint_exec::detail::to_bits(x)); }
inline float __int_as_float(int x) { return ::rocmlint_exec::detail::from_bits<float>(::rocmlint_exec::detail::to_bits(x)); }
inline float __uint_as_float(unsigned x) { return ::rocmlint_exec::detail::from_bits<float>(::rocmlint_exec::detail::to_bits(x)); }
inline long long __double_as_longlong(double x) { return ::rocmlint_exec::detail::from_bits<long long>(::rocmlint_exec::detail::to_bits(x)); }
inline double __longlong_as_double(long long x) { return ::rocmlint_exec::detail::from_bits<double>(::rocmlint_exec::detail::to_bits(x)); }
inline int __float2int_rn(float x) { return static_cast<int>(std::nearbyint(x)); }
inline int __float2int_rz(float x) { return static_cast<int>(x); }

inline long long clock64() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<long long>(now.tv_sec) * 1000000000ll + now.tv_nsec;
}
inline long long wall_clock64() { return clock64(); }

// ----- atomics: one lane runs at a time in a process, but the worker processes of a parallel
// launch share device memory: a compare-and-swap on the value's bits makes each one atomic.
namespace rocmlint_exec {
namespace detail {
// The atomic builtins below must not become calls of the __tsan_atomic hooks (which use them).
#define ROCMLINT_REAL_ATOMICS __attribute__((disable_sanitizer_instrumentation))
template <class T, class Update>
ROCMLINT_REAL_ATOMICS T atomic_update(T* address, Update update) {
  lockstep();
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  static_assert(sizeof(T) == sizeof(Bits), "atomics on 4- and 8-byte values");
  Bits* bits = reinterpret_cast<Bits*>(address);
  Bits expected = __atomic_load_n(bits, __ATOMIC_SEQ_CST);
  for (;;) {
    T old;
    std::memcpy(&old, &expected, sizeof old);
    const T desired = update(old);
    Bits wanted;
    std::memcpy(&wanted, &desired, sizeof wanted);
    if (__atomic_compare_exchange_n(bits, &expected, wanted, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return old;
  }
}
}  // namespace detail
}  // namespace rocmlint_exec
#define ROCMLINT_ATOMIC(name, T, update)                                                          \
  inline T name(T* address, T value) {                                                            \
    return ::rocmlint_exec::detail::atomic_update(address, [value](T old) -> T { return (update); }); \
  }
#define ROCMLINT_ATOMIC_ARITH(T)                                     \
  ROCMLINT_ATOMIC(atomicAdd, T, old + value)                         \
  ROCMLINT_ATOMIC(atomicSub, T, old - value)                         \
  ROCMLINT_ATOMIC(atomicExch, T, value)                              \
  ROCMLINT_ATOMIC(atomicMin, T, value < old ? value : old)           \
  ROCMLINT_ATOMIC(atomicMax, T, value > old ? value : old)
#define ROCMLINT_ATOMIC_BITS(T)                  \
  ROCMLINT_ATOMIC(atomicAnd, T, old & value)     \
  ROCMLINT_ATOMIC(atomicOr, T, old | value)      \
  ROCMLINT_ATOMIC(atomicXor, T, old ^ value)     \
  inline T atomicCAS(T* address, T compare, T value) {                              \
    return ::rocmlint_exec::detail::atomic_update(                                   \
        address, [compare, value](T old) -> T { return old == compare ? value : old; }); \
  }
ROCMLINT_ATOMIC_ARITH(int)
ROCMLINT_ATOMIC_ARITH(unsigned)
ROCMLINT_ATOMIC_ARITH(long long)
ROCMLINT_ATOMIC_ARITH(unsigned long long)
ROCMLINT_ATOMIC_ARITH(float)
ROCMLINT_ATOMIC_ARITH(double)
ROCMLINT_ATOMIC_BITS(int)
ROCMLINT_ATOMIC_BITS(unsigned)
ROCMLINT_ATOMIC_BITS(unsigned long long)
ROCMLINT_ATOMIC(atomicInc, unsigned, old >= value ? 0u : old + 1u)
ROCMLINT_ATOMIC(atomicDec, unsigned, (old == 0u || old > value) ? value : old - 1u)
#undef ROCMLINT_ATOMIC_BITS
#undef ROCMLINT_ATOMIC_ARITH
#undef ROCMLINT_ATOMIC

// ---------------------------------------------------------------------------------------
// Host runtime: device memory is host memory; copies are memcpy; launches run to the end
// before they return (every stream is the null stream).
namespace rocmlint_exec {
namespace detail {
inline hipError_t fail(hipError_t error) {
  g.last_error = error;
  return error;
}

// False when [pointer, pointer + bytes) starts in a device allocation and runs past its end.
inline bool within_allocation(const void* pointer, size_t bytes) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  for (const State::Allocation* block = g.allocations; block != nullptr; block = block->next)
    if (address >= block->start && address < block->start + block->bytes)
      return address + bytes <= block->start + block->bytes;
  return true;  // host memory
}

inline const State::Allocation* allocation_of(const void* pointer) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  for (const State::Allocation* block = g.allocations; block != nullptr; block = block->next)
    if (address >= block->start && address < block->start + block->bytes) return block;
  return nullptr;
}

// ----- the copy log (verify --run --compare) -----------------------------------------------
// Each copy to the host (and each host-visible buffer at a synchronize after a launch) is
// appended to ROCMLINT_COPY_LOG as a line "KIND FILE:LINE NTH BYTES KERNELS" and the bytes:
// the runner compares the 64- and 32-lane runs record by record.
inline FILE* copy_log() {
  static FILE* log = [] {
    const char* path = std::getenv("ROCMLINT_COPY_LOG");
    return path != nullptr && *path != '\0' ? std::fopen(path, "wb") : nullptr;
  }();
  return log;
}

inline void note_launch(const char* launched) {
  g.launched_since_sync = true;
  char name[128];  // the kernel's name without template arguments (the log splits on commas and spaces)
  size_t length = 0;
  for (const char* c = launched; *c != '\0' && *c != '<' && length + 1 < sizeof name; ++c)
    if (*c != ' ') name[length++] = *c;
  name[length] = '\0';
  for (int i = 0; i < g.launched_kernel_count; ++i)
    if (std::strcmp(g.launched_kernels[i], name) == 0) goto listed;
  if (g.launched_kernel_count < 64) {
    std::snprintf(g.launched_kernels[g.launched_kernel_count++], sizeof g.launched_kernels[0], "%s", name);
    if (FILE* log = copy_log()) std::fprintf(log, "launch %s 0 0 -\n", name), std::fflush(log);
  }
listed:
  char* list = g.launched_since_copy;
  const size_t used = std::strlen(list);
  for (const char* at = std::strstr(list, name); at != nullptr; at = std::strstr(at + 1, name))
    if ((at == list || at[-1] == ',') && (at[length] == ',' || at[length] == '\0')) return;  // named already
  if (used + length + 2 < sizeof g.launched_since_copy)
    std::snprintf(list + used, sizeof g.launched_since_copy - used, "%s%s", used ? "," : "", name);
}

inline const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

inline void log_copy(const char* kind, const char* file, unsigned line, const void* data, size_t bytes) {
  FILE* log = copy_log();
  if (log == nullptr) return;
  unsigned nth = 0;
  for (int i = 0; i < g.copy_site_count; ++i)
    if (g.copy_sites[i].line == line && std::strcmp(g.copy_sites[i].file, file) == 0) nth = ++g.copy_sites[i].count;
  if (nth == 0 && g.copy_site_count < 256) g.copy_sites[g.copy_site_count++] = State::CopySite{file, line, nth = 1};
  std::fprintf(log, "%s %s:%u %u %zu %s\n", kind, base_name(file), line, nth, bytes,
               g.launched_since_copy[0] ? g.launched_since_copy : "-");
  if (bytes) std::fwrite(data, 1, bytes, log);
  std::fflush(log);  // a run that stops later keeps what it copied
  g.launched_since_copy[0] = '\0';
}

// A synchronize after a launch: the host may now read managed and pinned memory.
inline void log_host_visible(const char* file, unsigned line) {
  if (!g.launched_since_sync || copy_log() == nullptr) return;
  g.launched_since_sync = false;
  const State::Allocation* blocks[256];
  int count = 0;
  for (const State::Allocation* block = g.allocations; block != nullptr && count < 256; block = block->next)
    if (block->host_visible) blocks[count++] = block;
  for (int i = count - 1; i >= 0; --i)  // in the order they were allocated
    log_copy("sync", file, line, reinterpret_cast<const void*>(blocks[i]->start), blocks[i]->bytes);
}

inline hipError_t checked_copy(void* destination, const void* source, size_t bytes, const char* file = "",
                               unsigned line = 0) {
  if (!within_allocation(destination, bytes) || !within_allocation(source, bytes)) return fail(hipErrorInvalidValue);
  if (bytes) std::memmove(destination, source, bytes);
  if (allocation_of(source) != nullptr && allocation_of(destination) == nullptr)
    log_copy("copy", file, line, destination, bytes);
  return hipSuccess;
}

// Device memory sits between two inaccessible pages, its end (rounded up to 16 bytes, the
// widest vector type's alignment) against the second: an access past either end faults, and
// the fault is reported as out of bounds of that buffer.
inline hipError_t allocate(void** pointer, size_t bytes, bool host_visible = false) {
  if (pointer == nullptr) return fail(hipErrorInvalidValue);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t used = bytes ? bytes : 1;
  const size_t rounded = (used + 15) & ~static_cast<size_t>(15);
  const size_t span = (rounded + page - 1) / page * page;
  // MAP_SHARED: the worker processes of a parallel launch write the same device memory
  void* mapped = mmap(nullptr, span + 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return fail(hipErrorOutOfMemory);
  char* base = static_cast<char*>(mapped);
  mprotect(base, page, PROT_NONE);
  mprotect(base + page + span, page, PROT_NONE);
  void* memory = base + page + span - rounded;
  std::memset(memory, kPoisonByte, bytes);  // never-written device memory shows up
  g.allocations = new State::Allocation{reinterpret_cast<uintptr_t>(memory), used, g.allocations,
                                        reinterpret_cast<uintptr_t>(base), span + 2 * page, host_visible};
  *pointer = memory;
  return hipSuccess;
}

inline hipError_t release(void* pointer) {
  if (pointer == nullptr) return hipSuccess;
  for (State::Allocation** link = &g.allocations; *link != nullptr; link = &(*link)->next) {
    State::Allocation* block = *link;
    if (block->start != reinterpret_cast<uintptr_t>(pointer)) continue;
    *link = block->next;
    munmap(reinterpret_cast<void*>(block->map_start), block->map_bytes);
    delete block;
    return hipSuccess;
  }
  return fail(hipErrorInvalidDevicePointer);
}

inline int attribute(hipDeviceAttribute_t attribute) {
  switch (attribute) {
    case hipDeviceAttributeMaxThreadsPerBlock: return static_cast<int>(kMaxBlockThreads);
    case hipDeviceAttributeMaxBlockDimX: return 1024;
    case hipDeviceAttributeMaxBlockDimY: return 1024;
    case hipDeviceAttributeMaxBlockDimZ: return 1024;
    case hipDeviceAttributeMaxGridDimX: return INT_MAX;
    case hipDeviceAttributeMaxGridDimY: return 65535;
    case hipDeviceAttributeMaxGridDimZ: return 65535;
    case hipDeviceAttributeMaxSharedMemoryPerBlock: return static_cast<int>(kSharedMemoryBytes);
    case hipDeviceAttributeWarpSize: return g.wave_size;
    case hipDeviceAttributeMultiprocessorCount: return 1;
    case hipDeviceAttributeComputeCapabilityMajor: return g.wave_size == 64 ? 9 : 11;
    case hipDeviceAttributeComputeCapabilityMinor: return g.wave_size == 64 ? 4 : 0;
    case hipDeviceAttributeClockRate: return 1000000;
  }
  return -1;
}
}  // namespace detail
}  // namespace rocmlint_exec

inline const char* hipGetErrorString(hipError_t error) {
  switch (error) {
    case hipSuccess: return "no error";
    case hipErrorInvalidValue: return "invalid argument";
    case hipErrorOutOfMemory: return "out of memory";
    case hipErrorInvalidConfiguration: return "invalid configuration argument";
    case hipErrorInvalidDevicePointer: return "invalid device pointer";
    case hipErrorInvalidDevice: return "invalid device ordinal";
    case hipErrorInvalidSymbol: return "invalid device symbol";
    case hipErrorNotSupported: return "operation not supported";
  }
  return "unknown error";
}
inline const char* hipGetErrorName(hipError_t error) { return hipGetErrorString(error); }
inline hipError_t hipGetLastError() {
  const hipError_t error = ::rocmlint_exec::detail::g.last_error;
  ::rocmlint_exec::detail::g.last_error = hipSuccess;
  return error;
}
inline hipError_t hipPeekAtLastError() { return ::rocmlint_exec::detail::g.last_error; }
inline hipError_t hipDeviceSynchronize(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
  ::rocmlint_exec::detail::log_host_visible(file, line);
  return hipSuccess;
}
inline hipError_t hipDeviceReset() { return hipSuccess; }
inline hipError_t hipGetDeviceCount(int* count) { return *count = 1, hipSuccess; }
inline hipError_t hipGetDevice(int* device) { return *device = 0, hipSuccess; }
inline hipError_t hipSetDevice(int device) {
  return device == 0 ? hipSuccess : ::rocmlint_exec::detail::fail(hipErrorInvalidDevice);
}
inline hipError_t hipDeviceGetAttribute(int* value, hipDeviceAttribute_t attribute, int device) {
  if (device != 0) return ::rocmlint_exec::detail::fail(hipErrorInvalidDevice);
  const int answer = ::rocmlint_exec::detail::attribute(attribute);
  if (answer < 0) return ::rocmlint_exec::detail::fail(hipErrorInvalidValue);
  *value = answer;
  return hipSuccess;
}
inline hipError_t hipGetDeviceProperties(hipDeviceProp_t* properties, int device) {
  using namespace ::rocmlint_exec::detail;
  if (device != 0) return fail(hipErrorInvalidDevice);
  *properties = hipDeviceProp_t{};
  const bool wave64 = g.wave_size == 64;
  std::snprintf(properties->name, sizeof properties->name, "rocmlint CPU executor (wave%d, as %s)", g.wave_size,
                wave64 ? "gfx942" : "gfx1100");
  std::snprintf(properties->gcnArchName, sizeof properties->gcnArchName, "%s", wave64 ? "gfx942" : "gfx1100");
  properties->totalGlobalMem = 1ull << 34;
  properties->sharedMemPerBlock = ::rocmlint_exec::kSharedMemoryBytes;
  properties->regsPerBlock = 65536;
  properties->warpSize = g.wave_size;
  properties->maxThreadsPerBlock = static_cast<int>(::rocmlint_exec::kMaxBlockThreads);
  properties->maxThreadsDim[0] = properties->maxThreadsDim[1] = properties->maxThreadsDim[2] = 1024;
  properties->maxGridSize[0] = INT_MAX;
  properties->maxGridSize[1] = properties->maxGridSize[2] = 65535;
  properties->clockRate = 1000000;
  properties->multiProcessorCount = 1;
  properties->major = wave64 ? 9 : 11;
  properties->minor = wave64 ? 4 : 0;
  properties->maxThreadsPerMultiProcessor = 2048;
  properties->memoryClockRate = 1300000;
  properties->memoryBusWidth = 8192;
  properties->l2CacheSize = 4 << 20;
  properties->totalConstMem = 64 << 10;
  properties->concurrentKernels = 1;
  return hipSuccess;
}

inline hipError_t hipMalloc(void** pointer, size_t bytes) { return ::rocmlint_exec::detail::allocate(pointer, bytes); }
template <class T>
hipError_t hipMalloc(T** pointer, size_t bytes) {
  return ::rocmlint_exec::detail::allocate(reinterpret_cast<void**>(pointer), bytes);
}
template <class T>
hipError_t hipMallocManaged(T** pointer, size_t bytes, unsigned = 1) {
  return ::rocmlint_exec::detail::allocate(reinterpret_cast<void**>(pointer), bytes, true);
}
template <class T>
hipError_t hipHostMalloc(T** pointer, size_t bytes, unsigned = 0) {
  return ::rocmlint_exec::detail::allocate(reinterpret_cast<void**>(pointer), bytes, true);
}
template <class T>
hipError_t hipHostAlloc(T** pointer, size_t bytes, unsigned flags = 0) {  // the older name
  return hipHostMalloc(pointer, bytes, flags);
}
template <class T>
hipError_t hipMallocHost(T** pointer, size_t bytes) {
  return ::rocmlint_exec::detail::allocate(reinterpret_cast<void**>(pointer), bytes, true);
}
inline hipError_t hipFree(void* pointer) { return ::rocmlint_exec::detail::release(pointer); }
inline hipError_t hipHostFree(void* pointer) { return ::rocmlint_exec::detail::release(pointer); }
inline hipError_t hipFreeHost(void* pointer) { return ::rocmlint_exec::detail::release(pointer); }
inline hipError_t hipMemcpy(void* destination, const void* source, size_t bytes, hipMemcpyKind,
                            const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
  return ::rocmlint_exec::detail::checked_copy(destination, source, bytes, file, line);
}
inline hipError_t hipMemcpyAsync(void* destination, const void* source, size_t bytes, hipMemcpyKind kind,
                                 hipStream_t = nullptr, const char* file = __builtin_FILE(),
                                 unsigned line = __builtin_LINE()) {
  return hipMemcpy(destination, source, bytes, kind, file, line);
}
inline hipError_t hipMemset(void* destination, int value, size_t bytes) {
  if (!::rocmlint_exec::detail::within_allocation(destination, bytes))
    return ::rocmlint_exec::detail::fail(hipErrorInvalidValue);
  std::memset(destination, value, bytes);
  return hipSuccess;
}
inline hipError_t hipMemsetAsync(void* destination, int value, size_t bytes, hipStream_t = nullptr) {
  return hipMemset(destination, value, bytes);
}
template <class T>
hipError_t hipMemcpyToSymbol(const T& symbol, const void* source, size_t bytes, size_t offset = 0,
                             hipMemcpyKind = hipMemcpyHostToDevice) {
  if (offset + bytes > sizeof(T)) return ::rocmlint_exec::detail::fail(hipErrorInvalidValue);
  std::memcpy(reinterpret_cast<char*>(const_cast<T*>(&symbol)) + offset, source, bytes);
  return hipSuccess;
}
template <class T>
hipError_t hipMemcpyToSymbol(::rocmlint_exec::SymbolAddress<T> symbol, const void* source, size_t bytes,
                             size_t offset = 0, hipMemcpyKind kind = hipMemcpyHostToDevice) {
  return hipMemcpyToSymbol(*symbol.address, source, bytes, offset, kind);
}
template <class T>
hipError_t hipMemcpyFromSymbol(void* destination, const T& symbol, size_t bytes, size_t offset = 0,
                               hipMemcpyKind = hipMemcpyDeviceToHost, const char* file = __builtin_FILE(),
                               unsigned line = __builtin_LINE()) {
  if (offset + bytes > sizeof(T)) return ::rocmlint_exec::detail::fail(hipErrorInvalidValue);
  std::memcpy(destination, reinterpret_cast<const char*>(&symbol) + offset, bytes);
  ::rocmlint_exec::detail::log_copy("copy", file, line, destination, bytes);
  return hipSuccess;
}
template <class T>
hipError_t hipMemcpyFromSymbol(void* destination, ::rocmlint_exec::SymbolAddress<T> symbol, size_t bytes,
                               size_t offset = 0, hipMemcpyKind kind = hipMemcpyDeviceToHost,
                               const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
  return hipMemcpyFromSymbol(destination, *symbol.address, bytes, offset, kind, file, line);
}

inline hipError_t hipStreamCreate(hipStream_t* stream) { return *stream = new rocmlint_stream{}, hipSuccess; }
inline hipError_t hipStreamCreateWithFlags(hipStream_t* stream, unsigned) { return hipStreamCreate(stream); }
inline hipError_t hipStreamDestroy(hipStream_t stream) { return delete stream, hipSuccess; }
inline hipError_t hipStreamSynchronize(hipStream_t, const char* file = __builtin_FILE(),
                                       unsigned line = __builtin_LINE()) {
  ::rocmlint_exec::detail::log_host_visible(file, line);
  return hipSuccess;
}
inline hipError_t hipEventCreate(hipEvent_t* event) { return *event = new rocmlint_event{}, hipSuccess; }
inline hipError_t hipEventDestroy(hipEvent_t event) { return delete event, hipSuccess; }
inline hipError_t hipEventRecord(hipEvent_t event, hipStream_t = nullptr) {
  event->seconds = static_cast<double>(clock64()) * 1e-9;
  return hipSuccess;
}
inline hipError_t hipEventSynchronize(hipEvent_t) { return hipSuccess; }
inline hipError_t hipEventElapsedTime(float* milliseconds, hipEvent_t start, hipEvent_t stop) {
  *milliseconds = static_cast<float>((stop->seconds - start->seconds) * 1e3);
  return hipSuccess;
}

// hipLaunchKernelGGL(kernel, grid, block, shared bytes, stream, args...)
#define hipLaunchKernelGGL(kernel, grid, block, shared, stream, ...)                                     \
  ::rocmlint_exec::launch(#kernel, ::rocmlint_exec::Site::here(),                                       \
                          [&](auto&&... rocmlint_args) { kernel(rocmlint_args...); }, dim3(grid), dim3(block), \
                          static_cast<size_t>(shared), (stream))(__VA_ARGS__)

// ---------------------------------------------------------------------------------------
// The CUDA runtime names hipify renames (the subset above).
#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaErrorInvalidValue hipErrorInvalidValue
#define cudaErrorMemoryAllocation hipErrorOutOfMemory
#define cudaErrorInvalidConfiguration hipErrorInvalidConfiguration
#define cudaGetErrorString hipGetErrorString
#define cudaGetErrorName hipGetErrorName
#define cudaGetLastError hipGetLastError
#define cudaPeekAtLastError hipPeekAtLastError
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaDeviceReset hipDeviceReset
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaGetDevice hipGetDevice
#define cudaSetDevice hipSetDevice
#define cudaDeviceProp hipDeviceProp_t
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaDeviceAttr hipDeviceAttribute_t
#define cudaDevAttrWarpSize hipDeviceAttributeWarpSize
#define cudaDevAttrMaxThreadsPerBlock hipDeviceAttributeMaxThreadsPerBlock
#define cudaDevAttrMaxSharedMemoryPerBlock hipDeviceAttributeMaxSharedMemoryPerBlock
#define cudaDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define cudaMalloc hipMalloc
#define cudaMallocManaged hipMallocManaged
#define cudaMallocHost hipHostMalloc
#define cudaHostAlloc hipHostAlloc
#define cudaHostAllocDefault hipHostMallocDefault
#define cudaFree hipFree
#define cudaFreeHost hipHostFree
#define cudaMemcpy hipMemcpy
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemset hipMemset
#define cudaMemsetAsync hipMemsetAsync
#define cudaMemcpyToSymbol hipMemcpyToSymbol
#define cudaMemcpyFromSymbol hipMemcpyFromSymbol
#define cudaMemcpyKind hipMemcpyKind
#define cudaMemcpyHostToHost hipMemcpyHostToHost
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaMemcpyDefault hipMemcpyDefault
#define cudaStream_t hipStream_t
#define cudaStreamCreate hipStreamCreate
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamDestroy hipStreamDestroy
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaEvent_t hipEvent_t
#define cudaEventCreate hipEventCreate
#define cudaEventDestroy hipEventDestroy
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEventElapsedTime hipEventElapsedTime

// ---------------------------------------------------------------------------------------
// -fsanitize=array-bounds (no sanitizer runtime is linked): an index past the end of an array
// whose extent the compiler knows (a __shared__ array, a local array) stops the run with the
// array, the index, the line and the thread. On a GPU it corrupts a neighbour in silence.
namespace rocmlint_exec {
namespace detail {
struct UbsanLocation {
  const char* file;
  unsigned line;
  unsigned column;
};
struct UbsanType {
  unsigned short kind;  // 0: integer
  unsigned short info;  // integer: log2(bit width) << 1 | signed
  char name[1];
};
struct UbsanOutOfBounds {
  UbsanLocation location;
  const UbsanType* array_type;
  const UbsanType* index_type;
};
[[noreturn]] inline void out_of_bounds(void* data, void* index) {
  const auto* found = static_cast<const UbsanOutOfBounds*>(data);
  const unsigned width = 1u << (found->index_type->info >> 1);
  const bool is_signed = (found->index_type->info & 1) != 0;
  long long value = static_cast<long long>(reinterpret_cast<uintptr_t>(index));
  if (width < 64 && is_signed) value = (value << (64 - width)) >> (64 - width);
  stop("out of bounds: index %lld of %s at %s:%u:%u", value, found->array_type->name, found->location.file,
       found->location.line, found->location.column);
}
}  // namespace detail
}  // namespace rocmlint_exec

extern "C" {
[[noreturn]] __attribute__((weak)) void __ubsan_handle_out_of_bounds(void* data, void* index) {
  ::rocmlint_exec::detail::out_of_bounds(data, index);
}
[[noreturn]] __attribute__((weak)) void __ubsan_handle_out_of_bounds_abort(void* data, void* index) {
  ::rocmlint_exec::detail::out_of_bounds(data, index);
}
}

// ---------------------------------------------------------------------------------------
// Hooks of -fsanitize=thread's instrumentation (no sanitizer runtime is linked): every access
// of the program's code to memory that is not a private local is a lockstep point. Not
// inline: the instrumentation adds the calls after the compiler chose what to emit.
extern "C" {
#define ROCMLINT_ACCESS_HOOKS(size)                                                                            \
  __attribute__((weak)) void __tsan_read##size(void* at) { ::rocmlint_exec::detail::access(at, size, __builtin_return_address(0)); }        \
  __attribute__((weak)) void __tsan_write##size(void* at) { ::rocmlint_exec::detail::access(at, size, __builtin_return_address(0)); }       \
  __attribute__((weak)) void __tsan_unaligned_read##size(void* at) { ::rocmlint_exec::detail::access(at, size, __builtin_return_address(0)); } \
  __attribute__((weak)) void __tsan_unaligned_write##size(void* at) { ::rocmlint_exec::detail::access(at, size, __builtin_return_address(0)); } \
  __attribute__((weak)) void __tsan_volatile_read##size(void* at) { ::rocmlint_exec::detail::access(at, size, __builtin_return_address(0)); } \
  __attribute__((weak)) void __tsan_volatile_write##size(void* at) { ::rocmlint_exec::detail::access(at, size, __builtin_return_address(0)); }
ROCMLINT_ACCESS_HOOKS(1)
ROCMLINT_ACCESS_HOOKS(2)
ROCMLINT_ACCESS_HOOKS(4)
ROCMLINT_ACCESS_HOOKS(8)
ROCMLINT_ACCESS_HOOKS(16)
#undef ROCMLINT_ACCESS_HOOKS
__attribute__((weak)) void __tsan_read_range(void*, unsigned long) { ::rocmlint_exec::detail::lockstep(); }
__attribute__((weak)) void __tsan_write_range(void*, unsigned long) { ::rocmlint_exec::detail::lockstep(); }
__attribute__((weak)) void __tsan_vptr_read(void**) {}
__attribute__((weak)) void __tsan_vptr_update(void**, void*) {}
__attribute__((weak)) void __tsan_func_entry(void*) {}
__attribute__((weak)) void __tsan_func_exit() {}
__attribute__((weak)) void __tsan_init() {}
__attribute__((weak)) void* __tsan_memcpy(void* to, const void* from, size_t bytes) {
  ::rocmlint_exec::detail::lockstep();
  return std::memcpy(to, from, bytes);
}
__attribute__((weak)) void* __tsan_memmove(void* to, const void* from, size_t bytes) {
  ::rocmlint_exec::detail::lockstep();
  return std::memmove(to, from, bytes);
}
__attribute__((weak)) void* __tsan_memset(void* to, int value, size_t bytes) {
  ::rocmlint_exec::detail::lockstep();
  return std::memset(to, value, bytes);
}
// The instrumentation turns atomic operations into calls even in code it does not instrument:
// these hooks use plain reads and writes (one OS thread runs the program's kernels).
__attribute__((weak)) void __tsan_atomic_thread_fence(int) {}
__attribute__((weak)) void __tsan_atomic_signal_fence(int) {}
// Real atomics: the worker processes of a parallel launch share device memory.
#define ROCMLINT_ATOMIC_HOOK(bits, T, op, update)                                                              \
  __attribute__((weak)) ROCMLINT_REAL_ATOMICS T __tsan_atomic##bits##_##op(volatile T* address, T value, int) {                     \
    ::rocmlint_exec::detail::lockstep();                                                                       \
    T old = __atomic_load_n(address, __ATOMIC_SEQ_CST);                                                        \
    while (!__atomic_compare_exchange_n(address, &old, static_cast<T>(update), false, __ATOMIC_SEQ_CST,        \
                                        __ATOMIC_SEQ_CST)) {                                                   \
    }                                                                                                          \
    return old;                                                                                                \
  }
#define ROCMLINT_ATOMIC_HOOKS(bits, T)                                                                         \
  __attribute__((weak)) ROCMLINT_REAL_ATOMICS T __tsan_atomic##bits##_load(const volatile T* address, int) {                       \
    ::rocmlint_exec::detail::lockstep();                                                                       \
    return __atomic_load_n(address, __ATOMIC_SEQ_CST);                                                         \
  }                                                                                                            \
  __attribute__((weak)) ROCMLINT_REAL_ATOMICS void __tsan_atomic##bits##_store(volatile T* address, T value, int) {                 \
    ::rocmlint_exec::detail::lockstep();                                                                       \
    __atomic_store_n(address, value, __ATOMIC_SEQ_CST);                                                        \
  }                                                                                                            \
  ROCMLINT_ATOMIC_HOOK(bits, T, exchange, value)                                                               \
  ROCMLINT_ATOMIC_HOOK(bits, T, fetch_add, old + value)                                                        \
  ROCMLINT_ATOMIC_HOOK(bits, T, fetch_sub, old - value)                                                        \
  ROCMLINT_ATOMIC_HOOK(bits, T, fetch_and, old & value)                                                        \
  ROCMLINT_ATOMIC_HOOK(bits, T, fetch_or, old | value)                                                         \
  ROCMLINT_ATOMIC_HOOK(bits, T, fetch_xor, old ^ value)                                                        \
  ROCMLINT_ATOMIC_HOOK(bits, T, fetch_nand, ~(old & value))                                                    \
  __attribute__((weak)) ROCMLINT_REAL_ATOMICS T __tsan_atomic##bits##_compare_exchange_val(volatile T* address, T expected, T value, \
                                                                      int, int) {                              \
    ::rocmlint_exec::detail::lockstep();                                                                       \
    __atomic_compare_exchange_n(address, &expected, value, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);         \
    return expected;                                                                                           \
  }                                                                                                            \
  __attribute__((weak)) ROCMLINT_REAL_ATOMICS int __tsan_atomic##bits##_compare_exchange_strong(volatile T* address, T* expected,   \
                                                                           T value, int order, int failure) {  \
    const T old = __tsan_atomic##bits##_compare_exchange_val(address, *expected, value, order, failure);       \
    const bool swapped = old == *expected;                                                                     \
    *expected = old;                                                                                           \
    return swapped;                                                                                            \
  }                                                                                                            \
  __attribute__((weak)) ROCMLINT_REAL_ATOMICS int __tsan_atomic##bits##_compare_exchange_weak(volatile T* address, T* expected,     \
                                                                         T value, int order, int failure) {    \
    return __tsan_atomic##bits##_compare_exchange_strong(address, expected, value, order, failure);           \
  }
ROCMLINT_ATOMIC_HOOKS(8, char)
ROCMLINT_ATOMIC_HOOKS(16, short)
ROCMLINT_ATOMIC_HOOKS(32, int)
ROCMLINT_ATOMIC_HOOKS(64, long long)
#undef ROCMLINT_ATOMIC_HOOKS
#undef ROCMLINT_ATOMIC_HOOK
}  // extern "C"

#pragma clang attribute pop
#endif  // ROCMLINT_EXECUTOR_H
