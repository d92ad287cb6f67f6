# Makes the flame graph page's C++ header from its web files, at build time:
#   cmake -DPAGE_DIR=<this folder> -DOUTPUT=<header> -P embed_page.cmake
# page.html links page.css and page.js; the header's page has them inline (one file
# the user can mail or open offline) and is cut in two where the profile's data goes
# (the NMPROF_DATA placeholder): kFlameGraphPageStart, then the data, then
# kFlameGraphPageEnd.
file(READ "${PAGE_DIR}/page.html" html)
file(READ "${PAGE_DIR}/page.css" css)
file(READ "${PAGE_DIR}/page.js" js)

set(css_link [[<link rel="stylesheet" href="page.css">]])
set(js_link [[<script src="page.js"></script>]])
set(data_placeholder "NMPROF_DATA")
foreach(part css_link js_link data_placeholder)
  string(FIND "${html}" "${${part}}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "page.html lacks ${${part}}")
  endif()
endforeach()
string(REPLACE "${css_link}" "<style>\n${css}</style>" html "${html}")
string(REPLACE "${js_link}" "<script>\n${js}</script>" html "${html}")

string(FIND "${html}" "${data_placeholder}" at)
string(SUBSTRING "${html}" 0 ${at} page_start)
string(LENGTH "${data_placeholder}" placeholder_length)
math(EXPR end_at "${at} + ${placeholder_length}")
string(SUBSTRING "${html}" ${end_at} -1 page_end)

# A raw string literal holds the page as it is; its delimiter must not occur in it.
set(delimiter "nmprof_page")
string(FIND "${html}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "the page contains the raw string's delimiter )${delimiter}\"")
endif()

set(header "// Generated from cli/report/render/flame_graph/page.{html,css,js} by embed_page.cmake: edit those.\n")
string(APPEND header "#pragma once\n\nnamespace nmprof::report {\n\n")
string(APPEND header "inline constexpr const char* kFlameGraphPageStart = R\"${delimiter}(${page_start})${delimiter}\";\n\n")
string(APPEND header "inline constexpr const char* kFlameGraphPageEnd = R\"${delimiter}(${page_end})${delimiter}\";\n\n")
string(APPEND header "}  // namespace nmprof::report\n")
# Written only when it changed, so that an unchanged page rebuilds nothing.
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" written)
endif()
if(NOT written STREQUAL header)
  file(WRITE "${OUTPUT}" "${header}")
endif()
