#include "cli/options/shell_completion.h"

#include <sstream>
#include <vector>

namespace nmprof::cli {
namespace {

struct OptionInfo {
  std::vector<std::string> names;  // "--format", "-o"
  std::string help;                // first line of the description
  bool takes_value = false;
  bool takes_file = false;
  std::vector<std::string> choices;  // from a type name such as "text|json"
};

// The options whose value is a file; other values (sizes, counts, tags) get no completion.
bool names_a_file(const CLI::Option& option) {
  for (const char* name : {"output", "diff", "upload-header-file"})
    if (option.check_lname(name)) return true;
  return false;
}

struct CommandInfo {
  std::string name;
  std::string help;
  std::vector<OptionInfo> options;
  bool runs_a_program = false;  // `run`: a command line follows "--"
};

// "a|b|c" (the type name of add_choice options) as its words; none for anything else.
std::vector<std::string> choices_of(const std::string& type_name) {
  if (type_name.find('|') == std::string::npos) return {};
  std::vector<std::string> words;
  std::string word;
  for (char c : type_name + "|") {
    if (c == '|') {
      words.push_back(word);
      word.clear();
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') {
      word += c;
    } else {
      return {};
    }
  }
  return words;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::vector<CommandInfo> commands_of(const CLI::App& app) {
  std::vector<CommandInfo> commands;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    CommandInfo command{sub->get_name(), first_line(sub->get_description()), {}, false};
    for (const CLI::Option* opt : sub->get_options()) {
      if (opt->get_group().empty()) continue;  // hidden: --upload-header, which is refused
      if (opt->get_positional()) {
        if (opt->get_name() == "command") command.runs_a_program = true;
        continue;
      }
      OptionInfo info;
      for (const auto& s : opt->get_snames()) info.names.push_back("-" + s);
      for (const auto& l : opt->get_lnames()) info.names.push_back("--" + l);
      info.help = first_line(opt->get_description());
      info.takes_value = opt->get_expected_max() > 0;
      info.takes_file = names_a_file(*opt);
      info.choices = choices_of(opt->get_type_name());
      command.options.push_back(std::move(info));
    }
    commands.push_back(std::move(command));
  }
  return commands;
}

std::string joined(const std::vector<std::string>& words, const std::string& separator = " ") {
  std::string text;
  for (const auto& w : words) text += (text.empty() ? "" : separator) + w;
  return text;
}

// zsh's _arguments spec text: brackets and colons would end its fields.
std::string zsh_safe(std::string text) {
  for (char& c : text)
    if (c == '[' || c == ']' || c == ':' || c == '\'') c = ' ';
  return text;
}

}  // namespace

std::string bash_completion(const CLI::App& app) {
  std::vector<CommandInfo> commands = commands_of(app);
  std::ostringstream out;
  out << "# bash completion for nmprof (made by `nmprof completion bash`)\n"
         "_nmprof() {\n"
         "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" command=\"\" i\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    if [[ -z $command && ${COMP_WORDS[i]} != -* ]]; then command=${COMP_WORDS[i]}; continue; fi\n"
         "    # run: after \"--\", the profiled program's own command line\n"
         "    if [[ $command == run && ${COMP_WORDS[i]} == -- ]]; then\n"
         "      if ((i + 1 == COMP_CWORD)); then COMPREPLY=($(compgen -c -- \"$cur\")); else COMPREPLY=($(compgen -f -- \"$cur\")); fi\n"
         "      return\n"
         "    fi\n"
         "  done\n"
         "  local options\n"
         "  case $command in\n";
  std::vector<std::string> names;
  for (const auto& c : commands) names.push_back(c.name);
  out << "    \"\") COMPREPLY=($(compgen -W \"" << joined(names) << " --help --version\" -- \"$cur\")); return ;;\n";
  for (const auto& c : commands) {
    std::vector<std::string> option_names;
    for (const auto& o : c.options) option_names.insert(option_names.end(), o.names.begin(), o.names.end());
    out << "    " << c.name << ")\n      options=\"" << joined(option_names) << "\"\n      case $prev in\n";
    for (const auto& o : c.options) {
      if (!o.takes_value) continue;
      out << "        " << joined(o.names, "|") << ") ";
      if (!o.choices.empty())
        out << "COMPREPLY=($(compgen -W \"" << joined(o.choices) << "\" -- \"$cur\")); return ;;\n";
      else if (o.takes_file)
        out << "COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n";
      else
        out << "COMPREPLY=(); return ;;\n";
    }
    out << "      esac ;;\n";
  }
  out << "    *) return ;;\n"
         "  esac\n"
         "  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$options\" -- \"$cur\")); return; fi\n"
         "  COMPREPLY=($(compgen -f -- \"$cur\"))\n"
         "}\n"
         "complete -o filenames -F _nmprof nmprof\n";
  return out.str();
}

std::string zsh_completion(const CLI::App& app) {
  std::vector<CommandInfo> commands = commands_of(app);
  std::ostringstream out;
  out << "#compdef nmprof\n"
         "# zsh completion for nmprof (made by `nmprof completion zsh`)\n"
         "_nmprof() {\n"
         "  local -a commands\n"
         "  commands=(\n";
  for (const auto& c : commands) out << "    '" << c.name << ":" << zsh_safe(c.help) << "'\n";
  out << "  )\n"
         "  if (( CURRENT == 2 )); then _describe 'command' commands; return; fi\n"
         "  local command=$words[2]\n"
         "  shift words; (( CURRENT-- ))\n"
         "  case $command in\n";
  for (const auto& c : commands) {
    out << "    " << c.name << ")\n      _arguments -s -S \\\n";
    for (const auto& o : c.options) {
      std::string action = !o.takes_value          ? ""
                           : !o.choices.empty()   ? ":value:(" + joined(o.choices) + ")"
                           : o.takes_file         ? ":file:_files"
                                                  : ":value: ";
      if (o.names.size() == 1) {
        out << "        '" << o.names[0] << "[" << zsh_safe(o.help) << "]" << action << "' \\\n";
      } else {
        out << "        '(" << joined(o.names) << ")'{" << joined(o.names, ",") << "}'[" << zsh_safe(o.help) << "]"
            << action << "' \\\n";
      }
    }
    out << (c.runs_a_program ? "        '*::command:_normal'" : "        '*:file:_files'") << " ;;\n";
  }
  out << "  esac\n"
         "}\n"
         "_nmprof \"$@\"\n";
  return out.str();
}

CLI::App* add_completion_command(CLI::App& app, std::string& shell) {
  CLI::App* command = app.add_subcommand("completion", "Print the shell completion script for bash or zsh");
  command->add_option("shell", shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
  command->footer("Examples:\n  source <(nmprof completion bash)\n  nmprof completion zsh > ~/.zfunc/_nmprof");
  return command;
}

}  // namespace nmprof::cli
