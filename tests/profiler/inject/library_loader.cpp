// Loads libfusionscope_inject.so as the CUDA driver does (dlopen, then InitializeInjection) and
// as NVTX does (InitializeInjectionNvtx2), in a process with no GPU work: the library's own
// start-up, hello and end of stream, tested without a GPU.
//
//   library_loader LIBRARY [--exit CODE] [--fork]
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int code = 0;
  bool fork_child = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--exit" && i + 1 < argc) code = std::atoi(argv[++i]);
    if (a == "--fork") fork_child = true;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "library_loader: %s\n", dlerror());
    return 3;
  }
  using Init = int (*)();
  auto init = reinterpret_cast<Init>(dlsym(lib, "InitializeInjection"));
  if (init == nullptr || init() != 1) return 4;
  if (init() != 1) return 5;  // a second call is harmless
  if (fork_child) {
    // A forked child is not the process that connected: it must not write into the stream.
    const pid_t pid = fork();
    if (pid == 0) std::exit(0);
    waitpid(pid, nullptr, 0);
  }
  return code;
}
