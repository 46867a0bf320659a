#include "sandbox/init_image.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <mutex>

#include "sandbox/process_fd.hpp"

// The image, placed in .rodata by the assembler (LLMX_SANDBOX_INIT_PATH is set by CMake).
asm(".section .rodata\n"
    ".balign 16\n"
    ".global llmx_sandbox_init_begin\n"
    "llmx_sandbox_init_begin:\n"
    ".incbin \"" LLMX_SANDBOX_INIT_PATH "\"\n"
    ".global llmx_sandbox_init_end\n"
    "llmx_sandbox_init_end:\n"
    ".previous\n");
extern "C" const char llmx_sandbox_init_begin[];
extern "C" const char llmx_sandbox_init_end[];

namespace llmx::sandbox {
namespace {

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U  // Linux 6.3: executable even under vm.memfd_noexec = 1
#endif

struct Image {
  int fd = -1;
  std::string error;
};

Image make_image() {
  Image img;
  auto fail = [&img](const char* what) {
    img.error = std::string(what) + ": " + std::strerror(errno);
    if (img.fd >= 0) ::close(img.fd);
    img.fd = -1;
    return img;
  };
  const unsigned flags = MFD_CLOEXEC | MFD_ALLOW_SEALING;
  int fd = ::memfd_create("llmx-sandbox-init", flags | MFD_EXEC);
  if (fd < 0 && errno == EINVAL) fd = ::memfd_create("llmx-sandbox-init", flags);  // before 6.3
  img.fd = fd_above_stdio(fd);
  fd = img.fd;
  if (fd < 0) return fail("memfd_create");
  const char* p = llmx_sandbox_init_begin;
  size_t left = size_t(llmx_sandbox_init_end - llmx_sandbox_init_begin);
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("write init image");
    p += n;
    left -= size_t(n);
  }
  if (::fchmod(fd, 0555) != 0) return fail("fchmod init image");
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0)
    return fail("seal init image");
  // Keep only a read-only descriptor: execve() refuses a file someone may still write.
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  int ro = fd_above_stdio(::open(path, O_RDONLY | O_CLOEXEC));
  if (ro >= 0) {
    ::close(fd);
    img.fd = ro;
  }
  return img;
}

}  // namespace

int init_image_fd(std::string* error) {
  static const Image image = make_image();
  if (image.fd < 0 && error) *error = image.error;
  return image.fd;
}

}  // namespace llmx::sandbox
