#include "commands.h"

namespace fusionscope::cli {

int& exit_code() {
  static int code = 0;
  return code;
}

}  // namespace fusionscope::cli
