// Pixels out of OpenGL: an offscreen framebuffer to render a screenshot at any size (even larger
// than the screen, and from a hidden window), and PNG export of a rectangle of what was drawn.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fusionscope::ui {

// A colour framebuffer object of a fixed size. Needs a current OpenGL 3.0 context.
class OffscreenTarget {
 public:
  OffscreenTarget() = default;
  OffscreenTarget(const OffscreenTarget&) = delete;
  OffscreenTarget& operator=(const OffscreenTarget&) = delete;
  ~OffscreenTarget();

  // False with a reason in *error when the driver lacks framebuffer objects or refuses the size.
  bool create(int width, int height, std::string* error);
  void bind() const;    // draw and read from it
  void unbind() const;  // back to the window's framebuffer

 private:
  unsigned fbo_ = 0, color_ = 0;
};

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgba;  // rows top to bottom
};

// Reads [x, x+w) x [y, y+h) (top-left origin, pixels) of the bound read framebuffer, whose height
// is fb_height, into an image with rows top to bottom. The rectangle is clipped to the buffer.
Image read_pixels(int x, int y, int w, int h, int fb_width, int fb_height);

// Writes a PNG; false with a reason in *error.
bool write_png(const std::string& path, const Image& image, std::string* error);

}  // namespace fusionscope::ui
