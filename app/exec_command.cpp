#include "app/exec_command.h"

#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/user_context.h"
#include "sandbox/sandboxed_command.h"

namespace caretz {

namespace {

void write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n <= 0) return;
        data.remove_prefix(static_cast<size_t>(n));
    }
}

}  // namespace

int run_exec(const CommandLine& cl, const Settings& settings) {
    UserContext user = current_user_context();
    PolicySettings sandbox = settings.sandbox;
    sandbox.read_only = cl.plan;
    SandboxPolicy policy = make_policy(sandbox, user.home, user.cwd, config_dir(user.home),
                                       user.env.count("DOCKER_HOST") ? user.env.at("DOCKER_HOST") : "");
    Environment env = command_environment(user.env, policy.env_overlay, api_key_variables(""));

    std::string output;
    int exit_code;
    try {
        exit_code = run_in_fresh_sandbox(policy, user.cwd, {user.shell, "-c", cl.command}, env,
                                         [&](std::string_view chunk) {
                                             if (cl.json) {
                                                 output.append(chunk);
                                             } else {
                                                 write_all(STDOUT_FILENO, chunk);
                                             }
                                         });
    } catch (const SandboxStartError& e) {
        std::fprintf(stderr, "caretz: %s\n", e.what());
        return 125;
    }
    if (cl.json) {
        nlohmann::json result = {{"exit_code", exit_code},
                                 {"output", output},
                                 {"cwd", user.cwd},
                                 {"ran", "sandbox"},
                                 {"refusals", nlohmann::json::array()},
                                 {"decision", nullptr}};
        std::string text = result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        text += '\n';
        write_all(STDOUT_FILENO, text);
    }
    return exit_code;
}

}  // namespace caretz
