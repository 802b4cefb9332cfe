// An OpenGL context without a display, for `fusionscope screenshot` on a GPU server with no X
// server: EGL on a device (NVIDIA's driver renders on the GPU; Mesa renders in software), with a
// small pbuffer as the drawable; the image itself goes to an offscreen framebuffer as usual.
// libEGL.so.1 is opened at run time, so the program needs it only when it renders this way.
#include <dlfcn.h>

#include <cstdio>

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <string>

#include "platform.h"

namespace fusionscope::ui {

namespace {

#ifndef EGL_PLATFORM_SURFACELESS_MESA
#define EGL_PLATFORM_SURFACELESS_MESA 0x31DD
#endif

struct Egl {
  PFNEGLGETPROCADDRESSPROC get_proc = nullptr;
  PFNEGLGETDISPLAYPROC get_display = nullptr;
  PFNEGLINITIALIZEPROC initialize = nullptr;
  PFNEGLTERMINATEPROC terminate = nullptr;
  PFNEGLCHOOSECONFIGPROC choose_config = nullptr;
  PFNEGLBINDAPIPROC bind_api = nullptr;
  PFNEGLCREATECONTEXTPROC create_context = nullptr;
  PFNEGLDESTROYCONTEXTPROC destroy_context = nullptr;
  PFNEGLCREATEPBUFFERSURFACEPROC create_pbuffer = nullptr;
  PFNEGLDESTROYSURFACEPROC destroy_surface = nullptr;
  PFNEGLMAKECURRENTPROC make_current = nullptr;
  PFNEGLGETERRORPROC get_error = nullptr;
  PFNEGLQUERYDEVICESEXTPROC query_devices = nullptr;
  PFNEGLGETPLATFORMDISPLAYEXTPROC platform_display = nullptr;
};

template <class F>
void load(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
}

bool load_egl(void* lib, Egl& e) {
  load(lib, e.get_proc, "eglGetProcAddress");
  load(lib, e.get_display, "eglGetDisplay");
  load(lib, e.initialize, "eglInitialize");
  load(lib, e.terminate, "eglTerminate");
  load(lib, e.choose_config, "eglChooseConfig");
  load(lib, e.bind_api, "eglBindAPI");
  load(lib, e.create_context, "eglCreateContext");
  load(lib, e.destroy_context, "eglDestroyContext");
  load(lib, e.create_pbuffer, "eglCreatePbufferSurface");
  load(lib, e.destroy_surface, "eglDestroySurface");
  load(lib, e.make_current, "eglMakeCurrent");
  load(lib, e.get_error, "eglGetError");
  if (!e.get_proc || !e.get_display || !e.initialize || !e.terminate || !e.choose_config ||
      !e.bind_api || !e.create_context || !e.destroy_context || !e.create_pbuffer ||
      !e.destroy_surface || !e.make_current || !e.get_error)
    return false;
  e.query_devices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(e.get_proc("eglQueryDevicesEXT"));
  e.platform_display =
      reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(e.get_proc("eglGetPlatformDisplayEXT"));
  return true;
}

// The first display that initialises: the devices (GPUs first; Mesa lists a software one too),
// then Mesa's surfaceless platform, then the default display.
EGLDisplay open_display(const Egl& e) {
  EGLint major = 0, minor = 0;
  if (e.query_devices && e.platform_display) {
    EGLDeviceEXT devices[16];
    EGLint n = 0;
    if (e.query_devices(16, devices, &n))
      for (EGLint i = 0; i < n; ++i) {
        EGLDisplay d = e.platform_display(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr);
        if (d != EGL_NO_DISPLAY && e.initialize(d, &major, &minor)) return d;
      }
    EGLDisplay d = e.platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    if (d != EGL_NO_DISPLAY && e.initialize(d, &major, &minor)) return d;
  }
  EGLDisplay d = e.get_display(EGL_DEFAULT_DISPLAY);
  if (d != EGL_NO_DISPLAY && e.initialize(d, &major, &minor)) return d;
  return EGL_NO_DISPLAY;
}

std::string egl_error(const Egl& e) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "EGL error 0x%04x", static_cast<unsigned>(e.get_error()));
  return buf;
}

}  // namespace

bool open_headless_platform(Platform& p, const WindowSpec& spec, std::string* error) {
  auto fail = [&](const std::string& why) {
    if (error) *error = "cannot render without a display: " + why;
    close_headless_platform(p);
    return false;
  };
  p.egl_library = dlopen("libEGL.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!p.egl_library)
    return fail("libEGL.so.1 is not installed (" + std::string(dlerror()) +
                "); set DISPLAY to an X server, or use xvfb-run");
  Egl e;
  if (!load_egl(p.egl_library, e)) return fail("libEGL.so.1 lacks EGL 1.4 functions");
  EGLDisplay display = open_display(e);
  if (display == EGL_NO_DISPLAY) return fail("no EGL device or display could be initialised");
  p.egl_display = display;
  const EGLint config_attributes[] = {EGL_SURFACE_TYPE,
                                      EGL_PBUFFER_BIT,
                                      EGL_RED_SIZE,
                                      8,
                                      EGL_GREEN_SIZE,
                                      8,
                                      EGL_BLUE_SIZE,
                                      8,
                                      EGL_ALPHA_SIZE,
                                      8,
                                      EGL_RENDERABLE_TYPE,
                                      EGL_OPENGL_BIT,
                                      EGL_NONE};
  EGLConfig config = nullptr;
  EGLint configs = 0;
  if (!e.choose_config(display, config_attributes, &config, 1, &configs) || configs < 1)
    return fail("no EGL configuration renders desktop OpenGL into a pbuffer (" + egl_error(e) +
                ")");
  if (!e.bind_api(EGL_OPENGL_API))
    return fail("EGL cannot bind desktop OpenGL (" + egl_error(e) + ")");
  const EGLint context_attributes[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 0,
                                       EGL_NONE};
  p.egl_context = e.create_context(display, config, EGL_NO_CONTEXT, context_attributes);
  if (p.egl_context == EGL_NO_CONTEXT) return fail("no OpenGL 3.0 context (" + egl_error(e) + ")");
  const EGLint pbuffer_attributes[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
  p.egl_surface = e.create_pbuffer(display, config, pbuffer_attributes);
  if (p.egl_surface == EGL_NO_SURFACE) return fail("no pbuffer surface (" + egl_error(e) + ")");
  if (!e.make_current(display, p.egl_surface, p.egl_surface, p.egl_context))
    return fail("cannot make the context current (" + egl_error(e) + ")");
  p.input = false;
  return init_imgui(p, spec, error);
}

void close_headless_platform(Platform& p) {
  if (!p.egl_library) return;
  Egl e;
  if (load_egl(p.egl_library, e) && p.egl_display) {
    e.make_current(p.egl_display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (p.egl_surface) e.destroy_surface(p.egl_display, p.egl_surface);
    if (p.egl_context) e.destroy_context(p.egl_display, p.egl_context);
    e.terminate(p.egl_display);
  }
  // The library stays loaded: drivers register exit handlers that must still find their code.
  p.egl_library = nullptr;
  p.egl_display = p.egl_context = p.egl_surface = nullptr;
}

}  // namespace fusionscope::ui
