// The one list of the app's views. The View menu, the tabs, a view drawn alone (`screenshot
// --view`, File > Export view) and the state probe all read it: a new view is one entry in
// view_registry.cpp and a draw function in a file of its own.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace fusionscope::ui {

struct AppState;

struct ViewInfo {
  const char* id;           // the command-line name (`screenshot --view`) and the probe's `view=`
  const char* title;        // the tab's and the View menu's label
  const char* description;  // one line, for --help and the menu's tooltip
  void (*draw)(AppState& app);
  bool tab = true;  // a tab and a View menu item; false: only drawn alone (the runs table)
};

// Every view, in tab order.
std::span<const ViewInfo> views();

// The view with this id, or nullptr.
const ViewInfo* find_view(std::string_view id);

// "timeline, stats, ..., or roofline": the ids, for messages and --help.
std::string view_ids_text();

// Brings a view to the front on the next frame (selects its tab).
void show_view(AppState& app, std::string_view id);

}  // namespace fusionscope::ui
