#include "app/completions.h"

#include <map>

namespace caretz {

namespace {

// The durations offered for a DURATION value before anything is typed; after digits, the
// digits with each unit (app/duration.h) are offered instead.
constexpr const char* kDurationExamples = "90s 5m 1h";
constexpr const char* kChoice = "CHOICE";
constexpr const char* kText = "TEXT";

// The set of an IsMember check, from its description ("{openai,anthropic}").
std::vector<std::string> member_choices(CLI::Option& option) {
    std::string set;
    try {
        set = option.get_validator()->get_description();
    } catch (const CLI::OptionNotFound&) {
        return {};
    }
    if (set.size() < 2 || set.front() != '{' || set.back() != '}') return {};
    std::vector<std::string> choices;
    std::string item;
    for (char c : set.substr(1, set.size() - 2)) {
        if (c != ',') {
            item += c;
            continue;
        }
        choices.push_back(item);
        item.clear();
    }
    choices.push_back(item);
    return choices;
}

CompletionOption describe_option(CLI::Option& option) {
    CompletionOption out;
    for (const auto& name : option.get_lnames()) out.names.push_back("--" + name);
    for (const auto& name : option.get_snames()) out.names.push_back("-" + name);
    out.help = option.get_description();
    if (option.get_expected_min() == 0) return out;  // a flag
    out.choices = member_choices(option);
    const std::string& type = option.get_type_name();
    if (!out.choices.empty())
        out.value = kChoice;
    else if (type == kProfileValue || type == kDurationValue || type == kFileValue)
        out.value = type;
    else
        out.value = kText;
    return out;
}

void describe_command(CLI::App& app, const std::string& path, std::vector<CompletionCommand>& out) {
    CompletionCommand command;
    command.path = path;
    command.help = app.get_description();
    command.runs_command = app.get_prefix_command();
    for (CLI::Option* option : app.get_options()) {
        if (option->get_lnames().empty() && option->get_snames().empty()) continue;  // positional
        command.options.push_back(describe_option(*option));
    }
    std::vector<CLI::App*> visible =
        app.get_subcommands([](CLI::App* sub) { return !sub->get_group().empty(); });
    for (CLI::App* sub : visible) command.children.push_back(sub->get_name());
    out.push_back(std::move(command));
    for (CLI::App* sub : visible) describe_command(*sub, path + " " + sub->get_name(), out);
}

// `text` in single quotes for sh and zsh.
std::string sh_quote(const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// `text` in single quotes for fish, where a backslash escapes a quote or a backslash.
std::string fish_quote(const std::string& text) {
    std::string out = "'";
    for (char c : text) {
        if (c == '\'' || c == '\\') out += '\\';
        out += c;
    }
    return out + "'";
}

std::string joined(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
    return out;
}

// What an option's value is, by option name, for the scripts' `value` function: @profile,
// @duration, @file, @text, or the choices. Options share a name across subcommands only when
// they are the same option, so the first description of a name stands for all.
std::map<std::string, std::string> values_by_name(const std::vector<CompletionCommand>& commands) {
    std::map<std::string, std::string> values;
    for (const auto& command : commands)
        for (const auto& option : command.options) {
            if (option.value.empty()) continue;
            std::string value = option.value == kChoice          ? joined(option.choices)
                                : option.value == kText          ? "@text"
                                : option.value == kProfileValue  ? "@profile"
                                : option.value == kDurationValue ? "@duration"
                                                                 : "@file";
            for (const auto& name : option.names) values.emplace(name, value);
        }
    return values;
}

// The helpers bash and zsh share: each command's subcommands and options, each option's
// value, and which command takes a command line of its own.
std::string sh_tables(const std::vector<CompletionCommand>& commands, bool with_help) {
    std::string children = "_caretz_children() {\n    case $1 in\n";
    std::string options = "_caretz_options() {\n    case $1 in\n";
    std::string runs = "_caretz_runs_command() {\n    case $1 in\n";
    for (const auto& c : commands) {
        children +=
            "        " + sh_quote(c.path) + ") echo " + sh_quote(joined(c.children)) + " ;;\n";
        std::vector<std::string> names;
        for (const auto& o : c.options) names.insert(names.end(), o.names.begin(), o.names.end());
        options += "        " + sh_quote(c.path) + ") echo " + sh_quote(joined(names)) + " ;;\n";
        if (c.runs_command) runs += "        " + sh_quote(c.path) + ") return 0 ;;\n";
    }
    std::string out = children + "    esac\n}\n" + options + "    esac\n}\n" + runs +
                      "    esac\n    return 1\n}\n";
    out += "_caretz_value() {\n    case $1 in\n";
    for (const auto& [name, value] : values_by_name(commands))
        out += "        " + sh_quote(name) + ") echo " + sh_quote(value) + " ;;\n";
    out += "        *) return 1 ;;\n    esac\n}\n";
    if (!with_help) return out;
    // zsh shows each choice with its help: "name:help" lines, colons in names escaped.
    out += "_caretz_help() {\n    case $1 in\n";
    for (const auto& c : commands) {
        std::string lines;
        for (const auto& child : c.children)
            for (const auto& sub : commands)
                if (sub.path == c.path + " " + child) lines += child + ":" + sub.help + "\n";
        lines += "--\n";
        for (const auto& o : c.options)
            for (const auto& name : o.names) lines += name + ":" + o.help + "\n";
        out += "        " + sh_quote(c.path) + ") printf '%s' " + sh_quote(lines) + " ;;\n";
    }
    return out + "    esac\n}\n";
}

std::string bash_script(const std::vector<CompletionCommand>& commands) {
    return "# bash completion for caretz, generated by `caretz completions bash` from its "
           "command line\n" +
           sh_tables(commands, false) +
           R"SH(_caretz_complete_value() {
    local cur=$2
    case $1 in
        @profile) COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" completions profiles "${@:3}" 2>/dev/null)" -- "$cur")) ;;
        @duration)
            if [[ $cur =~ ^[0-9]+$ ]]; then
                COMPREPLY=("${cur}s" "${cur}m" "${cur}h")
            else
                COMPREPLY=($(compgen -W ')SH" +
           kDurationExamples + R"SH(' -- "$cur"))
            fi ;;
        @file)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur")) ;;
        @text) ;;
        *) COMPREPLY=($(compgen -W "$1" -- "$cur")) ;;
    esac
}
_caretz() {
    local cur=${COMP_WORDS[COMP_CWORD]} cmdpath=caretz word value i config=()
    COMPREPLY=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        if value=$(_caretz_value "$word"); then
            if ((i + 1 == COMP_CWORD)); then
                _caretz_complete_value "$value" "$cur" "${config[@]}"
                return
            fi
            [[ $word == --config ]] && config=(--config "${COMP_WORDS[i + 1]}")
            ((i++))
        elif [[ $word != -* ]]; then
            if _caretz_runs_command "$cmdpath"; then
                declare -F _command_offset >/dev/null && _command_offset "$i"
                return
            fi
            [[ " $(_caretz_children "$cmdpath") " == *" $word "* ]] && cmdpath="$cmdpath $word"
        fi
    done
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_caretz_options "$cmdpath")" -- "$cur"))
    elif _caretz_runs_command "$cmdpath"; then
        COMPREPLY=($(compgen -c -- "$cur"))
    else
        COMPREPLY=($(compgen -W "$(_caretz_children "$cmdpath")" -- "$cur"))
    fi
}
complete -F _caretz caretz
)SH";
}

std::string zsh_script(const std::vector<CompletionCommand>& commands) {
    return "#compdef caretz\n# zsh completion for caretz, generated by `caretz completions zsh` "
           "from its command line\n" +
           sh_tables(commands, true) +
           R"SH(_caretz_complete_value() {
    local -a values
    case $1 in
        @profile)
            values=(${(f)"$(_call_program profiles ${words[1]} completions profiles ${(q)@[2,-1]} 2>/dev/null)"})
            compadd -a values ;;
        @duration)
            if [[ $PREFIX == <-> ]]; then
                compadd -- ${PREFIX}s ${PREFIX}m ${PREFIX}h
            else
                compadd -- )SH" +
           kDurationExamples + R"SH(
            fi ;;
        @file) _files ;;
        @text) _message 'text' ;;
        *) values=(${=1}); compadd -a values ;;
    esac
}
_caretz() {
    local cmdpath=caretz word value i
    local -a config help cmds opts
    for ((i = 2; i < CURRENT; i++)); do
        word=${words[i]}
        if value=$(_caretz_value "$word"); then
            if ((i + 1 == CURRENT)); then
                _caretz_complete_value "$value" "${config[@]}"
                return
            fi
            [[ $word == --config ]] && config=(--config "${words[i + 1]}")
            ((i++))
        elif [[ $word != -* ]]; then
            if _caretz_runs_command "$cmdpath"; then
                shift $((i - 1)) words
                ((CURRENT -= i - 1))
                _normal
                return
            fi
            [[ " $(_caretz_children "$cmdpath") " == *" $word "* ]] && cmdpath="$cmdpath $word"
        fi
    done
    help=(${(f)"$(_caretz_help "$cmdpath")"})
    cmds=(${help[1,${help[(i)--]}-1]})
    opts=(${help[${help[(i)--]}+1,-1]})
    if [[ $PREFIX == -* ]]; then
        _describe -t options option opts
    elif _caretz_runs_command "$cmdpath"; then
        _command_names -e
    else
        _describe -t commands command cmds
    fi
}
_caretz "$@"
)SH";
}

std::string fish_script(const std::vector<CompletionCommand>& commands) {
    std::string out =
        "# fish completion for caretz, generated by `caretz completions fish` from its command "
        "line\nfunction __caretz_children\n    switch $argv[1]\n";
    for (const auto& c : commands) {
        if (c.children.empty()) continue;
        out += "        case " + fish_quote(c.path) + "\n            printf '%s\\n' " +
               joined(c.children) + "\n";
    }
    out += "    end\nend\nfunction __caretz_value\n    switch $argv[1]\n";
    for (const auto& [name, value] : values_by_name(commands))
        out +=
            "        case " + fish_quote(name) + "\n            echo " + fish_quote(value) + "\n";
    out +=
        "        case '*'\n            return 1\n    end\nend\n"
        "function __caretz_runs_command\n    switch $argv[1]\n";
    for (const auto& c : commands)
        if (c.runs_command)
            out += "        case " + fish_quote(c.path) + "\n            return 0\n";
    out += "    end\n    return 1\nend\n";
    out +=
        R"SH(# Where the line is: "caretz", "caretz exec", ..., or "command" once the command that caretz
# exec runs has begun.
function __caretz_path
    set -l words (commandline -opc)
    set -l cmdpath caretz
    set -l i 2
    while test $i -le (count $words)
        set -l word $words[$i]
        if __caretz_value $word >/dev/null
            set i (math $i + 1)
        else if not string match -q -- '-*' $word
            if __caretz_runs_command $cmdpath
                echo command
                return
            end
            if contains -- $word (__caretz_children $cmdpath)
                set cmdpath "$cmdpath $word"
            end
        end
        set i (math $i + 1)
    end
    echo $cmdpath
end
function __caretz_at
    test (__caretz_path) = $argv[1]
end
function __caretz_profiles
    set -l words (commandline -opc)
    set -l config
    set -l at (contains -i -- --config $words)
    and test $at -lt (count $words)
    and set config --config $words[(math $at + 1)]
    $words[1] completions profiles $config 2>/dev/null
end
function __caretz_durations
    set -l typed (commandline -ct)
    if string match -qr '^[0-9]+$' -- $typed
        printf '%s\n' {$typed}s {$typed}m {$typed}h
    else
        printf '%s\n' )SH" +
        std::string(kDurationExamples) + R"SH(
    end
end
complete -c caretz -n 'not __caretz_at command' -f
)SH";
    for (const auto& c : commands) {
        const std::string at = " -n " + fish_quote("__caretz_at " + fish_quote(c.path));
        for (const auto& child : c.children)
            for (const auto& sub : commands)
                if (sub.path == c.path + " " + child)
                    out += "complete -c caretz" + at + " -a " + child + " -d " +
                           fish_quote(sub.help) + "\n";
        if (c.runs_command) out += "complete -c caretz" + at + " -a '(__fish_complete_command)'\n";
        for (const auto& o : c.options) {
            out += "complete -c caretz" + at;
            for (const auto& name : o.names)
                out += (name.starts_with("--") ? " -l " + name.substr(2) : " -s " + name.substr(1));
            if (o.value == kProfileValue)
                out += " -x -a '(__caretz_profiles)'";
            else if (o.value == kDurationValue)
                out += " -x -a '(__caretz_durations)'";
            else if (o.value == kFileValue)
                out += " -r -F";
            else if (o.value == kChoice)
                out += " -x -a " + fish_quote(joined(o.choices));
            else if (!o.value.empty())
                out += " -x";
            out += " -d " + fish_quote(o.help) + "\n";
        }
    }
    return out;
}

}  // namespace

std::vector<CompletionCommand> completion_commands(CLI::App& app) {
    std::vector<CompletionCommand> commands;
    describe_command(app, app.get_name(), commands);
    return commands;
}

std::string completion_script(CLI::App& app, const std::string& shell) {
    auto commands = completion_commands(app);
    if (shell == "bash") return bash_script(commands);
    if (shell == "zsh") return zsh_script(commands);
    return fish_script(commands);
}

}  // namespace caretz
