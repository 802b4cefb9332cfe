#include "gl_capture.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <GL/gl.h>
#include <GL/glext.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <stb_image_write.h>

#include "fusionscope/storage/output_file.h"

namespace fusionscope::ui {

namespace {

// An OpenGL entry point of the current context: through GLFW for a window's context, through
// EGL for a headless one (egl_platform.cpp loads libEGL globally).
GLFWglproc gl_proc(const char* name) {
  if (glfwGetCurrentContext() != nullptr) return glfwGetProcAddress(name);
  using EglGetProc = GLFWglproc (*)(const char*);
  static const auto egl = reinterpret_cast<EglGetProc>(dlsym(RTLD_DEFAULT, "eglGetProcAddress"));
  return egl ? egl(name) : reinterpret_cast<GLFWglproc>(dlsym(RTLD_DEFAULT, name));
}

// Framebuffer-object entry points, resolved from the current context (GL 3.0 core functions are
// not exported by every libGL, so they are looked up rather than linked).
struct FboFunctions {
  PFNGLGENFRAMEBUFFERSPROC gen_framebuffers = nullptr;
  PFNGLDELETEFRAMEBUFFERSPROC delete_framebuffers = nullptr;
  PFNGLBINDFRAMEBUFFERPROC bind_framebuffer = nullptr;
  PFNGLGENRENDERBUFFERSPROC gen_renderbuffers = nullptr;
  PFNGLDELETERENDERBUFFERSPROC delete_renderbuffers = nullptr;
  PFNGLBINDRENDERBUFFERPROC bind_renderbuffer = nullptr;
  PFNGLRENDERBUFFERSTORAGEPROC renderbuffer_storage = nullptr;
  PFNGLFRAMEBUFFERRENDERBUFFERPROC framebuffer_renderbuffer = nullptr;
  PFNGLCHECKFRAMEBUFFERSTATUSPROC check_framebuffer_status = nullptr;

  bool load() {
    gen_framebuffers = reinterpret_cast<PFNGLGENFRAMEBUFFERSPROC>(gl_proc("glGenFramebuffers"));
    delete_framebuffers =
        reinterpret_cast<PFNGLDELETEFRAMEBUFFERSPROC>(gl_proc("glDeleteFramebuffers"));
    bind_framebuffer = reinterpret_cast<PFNGLBINDFRAMEBUFFERPROC>(gl_proc("glBindFramebuffer"));
    gen_renderbuffers = reinterpret_cast<PFNGLGENRENDERBUFFERSPROC>(gl_proc("glGenRenderbuffers"));
    delete_renderbuffers =
        reinterpret_cast<PFNGLDELETERENDERBUFFERSPROC>(gl_proc("glDeleteRenderbuffers"));
    bind_renderbuffer = reinterpret_cast<PFNGLBINDRENDERBUFFERPROC>(gl_proc("glBindRenderbuffer"));
    renderbuffer_storage =
        reinterpret_cast<PFNGLRENDERBUFFERSTORAGEPROC>(gl_proc("glRenderbufferStorage"));
    framebuffer_renderbuffer =
        reinterpret_cast<PFNGLFRAMEBUFFERRENDERBUFFERPROC>(gl_proc("glFramebufferRenderbuffer"));
    check_framebuffer_status =
        reinterpret_cast<PFNGLCHECKFRAMEBUFFERSTATUSPROC>(gl_proc("glCheckFramebufferStatus"));
    return gen_framebuffers && delete_framebuffers && bind_framebuffer && gen_renderbuffers &&
           delete_renderbuffers && bind_renderbuffer && renderbuffer_storage &&
           framebuffer_renderbuffer && check_framebuffer_status;
  }
};

const FboFunctions& fbo() {
  // Resolved once per process: the entry points do not change between contexts of one driver.
  static FboFunctions f;
  static const bool loaded = f.load();
  (void)loaded;
  return f;
}

}  // namespace

OffscreenTarget::~OffscreenTarget() {
  const FboFunctions& f = fbo();
  if (fbo_ && f.delete_framebuffers) f.delete_framebuffers(1, &fbo_);
  if (color_ && f.delete_renderbuffers) f.delete_renderbuffers(1, &color_);
}

bool OffscreenTarget::create(int width, int height, std::string* error) {
  const FboFunctions& f = fbo();
  if (!f.gen_framebuffers || !f.check_framebuffer_status) {
    if (error) *error = "this OpenGL driver has no framebuffer objects (OpenGL 3.0 is needed)";
    return false;
  }
  GLint max_size = 0;
  glGetIntegerv(GL_MAX_RENDERBUFFER_SIZE, &max_size);
  if (width <= 0 || height <= 0 || width > max_size || height > max_size) {
    if (error)
      *error = "image size " + std::to_string(width) + "x" + std::to_string(height) +
               " is outside what the OpenGL driver renders (1 to " + std::to_string(max_size) + ")";
    return false;
  }
  f.gen_renderbuffers(1, &color_);
  f.bind_renderbuffer(GL_RENDERBUFFER, color_);
  f.renderbuffer_storage(GL_RENDERBUFFER, GL_RGBA8, width, height);
  f.gen_framebuffers(1, &fbo_);
  f.bind_framebuffer(GL_FRAMEBUFFER, fbo_);
  f.framebuffer_renderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color_);
  const GLenum status = f.check_framebuffer_status(GL_FRAMEBUFFER);
  f.bind_framebuffer(GL_FRAMEBUFFER, 0);
  if (status != GL_FRAMEBUFFER_COMPLETE) {
    if (error)
      *error = "the OpenGL driver refused an offscreen framebuffer (status " +
               std::to_string(status) + ")";
    return false;
  }
  return true;
}

void OffscreenTarget::bind() const {
  fbo().bind_framebuffer(GL_FRAMEBUFFER, fbo_);
}
void OffscreenTarget::unbind() const {
  fbo().bind_framebuffer(GL_FRAMEBUFFER, 0);
}

Image read_pixels(int x, int y, int w, int h, int fb_width, int fb_height) {
  const int x0 = std::clamp(x, 0, fb_width), y0 = std::clamp(y, 0, fb_height);
  const int x1 = std::clamp(x + w, 0, fb_width), y1 = std::clamp(y + h, 0, fb_height);
  Image img;
  img.width = x1 - x0;
  img.height = y1 - y0;
  if (img.width <= 0 || img.height <= 0) return Image{};
  img.rgba.resize(static_cast<size_t>(img.width) * static_cast<size_t>(img.height) * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  // OpenGL counts rows from the bottom.
  glReadPixels(x0, fb_height - y1, img.width, img.height, GL_RGBA, GL_UNSIGNED_BYTE,
               img.rgba.data());
  const size_t row = static_cast<size_t>(img.width) * 4;
  std::vector<uint8_t> tmp(row);
  for (int r = 0; r < img.height / 2; ++r) {
    uint8_t* a = img.rgba.data() + static_cast<size_t>(r) * row;
    uint8_t* b = img.rgba.data() + static_cast<size_t>(img.height - 1 - r) * row;
    std::memcpy(tmp.data(), a, row);
    std::memcpy(a, b, row);
    std::memcpy(b, tmp.data(), row);
  }
  for (size_t i = 3; i < img.rgba.size(); i += 4) img.rgba[i] = 255;  // the window is opaque
  return img;
}

bool write_png(const std::string& path, const Image& image, std::string* error) {
  if (image.width <= 0 || image.height <= 0) {
    if (error) *error = "nothing to write: the image is empty";
    return false;
  }
  // Encoded in memory, then written with every error checked: stb's own file writer ignores a
  // failed write, which would leave a truncated picture behind a success.
  std::vector<unsigned char> png;
  auto append = [](void* context, void* data, int size) {
    auto* out = static_cast<std::vector<unsigned char>*>(context);
    const auto* bytes = static_cast<const unsigned char*>(data);
    out->insert(out->end(), bytes, bytes + size);
  };
  if (!stbi_write_png_to_func(append, &png, image.width, image.height, 4, image.rgba.data(),
                              image.width * 4)) {
    if (error) *error = "cannot encode the PNG for " + path;
    return false;
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    if (error) *error = "cannot write " + path + ": " + storage::write_error_reason(errno);
    return false;
  }
  size_t done = 0;
  int failure = 0;
  while (done < png.size()) {
    const ssize_t n = ::write(fd, png.data() + done, png.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failure = n < 0 ? errno : ENOSPC;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 && failure == 0) failure = errno;
  if (failure != 0) {
    if (error) *error = "writing " + path + " failed: " + storage::write_error_reason(failure);
    return false;
  }
  return true;
}

}  // namespace fusionscope::ui
