package dev.ensemble.sessions.deploy;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code ensemble-sessions} command line: {@code up} runs the whole system on this computer (a real
 * single-node Kafka broker and every service in one JVM), {@code run <service>} runs one service alone against a
 * cluster of one's own ({@link RunCommand}), {@code import} reads agent stores into a running system, {@code sessions}
 * lists the person's agent sessions and {@code show} one with the command that resumes it, {@code login} prints a
 * one-time login link for the web page, {@code choose} asks whether
 * a task should continue one of them, {@code bench} measures the projector, {@code assistant-turn} decides and records
 * one assistant turn for the program that runs the agent.
 */
@Command(name = "ensemble-sessions", mixinStandardHelpOptions = true, version = "ensemble-sessions 0.1.0",
        description = "Records every run of your coding agents as events on Kafka and derives their sessions.",
        subcommands = {UpCommand.class, ImportCommand.class, SessionsCommand.class, ShowCommand.class, LoginCommand.class, ChooseCommand.class,
                EvaluateChoiceCommand.class, BenchCommand.class, RecalibrateCommand.class, RebuildCommand.class, SoakCommand.class,
                RunCommand.class, AssistantTurnCommand.class})
public final class EnsembleSessions implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    /** Runs the command line given and exits with its code. */
    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /**
     * The command line {@link #main} runs: a command that fails prints {@code error: <message>} and ends with code 1; a
     * bad option or argument prints what is wrong ({@link #usageError}) and ends with code 2 (not the whole usage, under
     * which the one line that matters scrolls away). Every subcommand's {@code --version} prints this program's version.
     */
    static CommandLine commandLine() {
        CommandLine root = new CommandLine(new EnsembleSessions())
                .setExecutionExceptionHandler((ex, cmd, parsed) -> {
                    cmd.getErr().println("error: " + ex.getMessage());
                    org.slf4j.LoggerFactory.getLogger(EnsembleSessions.class).debug("failure", ex);
                    return 1;
                })
                .setParameterExceptionHandler(EnsembleSessions::usageError);
        giveVersion(root, root.getCommandSpec().version());
        return root;
    }

    private static void giveVersion(CommandLine cmd, String[] version) {
        for (CommandLine sub : cmd.getSubcommands().values()) {
            if (sub.getCommandSpec().version().length == 0) {
                sub.getCommandSpec().version(version);
            }
            giveVersion(sub, version);
        }
    }

    /**
     * Prints a usage error in a few lines: arguments it did not know first (with picocli's suggestions for a misspelt
     * option), also when the error is another one (a required option missing, most often because it was misspelt), then
     * the error, the {@code ENSEMBLE_*} variable a refused value came from when it was not on the command line (asked of
     * the command's own {@link EnvironmentDefaults}: a command that reads no variable names none), and the command's help.
     */
    private static int usageError(CommandLine.ParameterException ex, String[] args) {
        CommandLine cmd = ex.getCommandLine();
        java.io.PrintWriter err = cmd.getErr();
        java.util.List<String> unmatched = cmd.getUnmatchedArguments();
        if (!(ex instanceof CommandLine.UnmatchedArgumentException) && !unmatched.isEmpty()) {
            CommandLine.UnmatchedArgumentException unknown = new CommandLine.UnmatchedArgumentException(cmd, unmatched);
            err.println(unknown.getMessage());
            CommandLine.UnmatchedArgumentException.printSuggestions(unknown, err);
        }
        err.println(ex.getMessage());
        CommandLine.UnmatchedArgumentException.printSuggestions(ex, err);
        CommandLine.Model.OptionSpec option = ex.getArgSpec() instanceof CommandLine.Model.OptionSpec o ? o
                : refusedOption(cmd, ex.getMessage()); // a check of ours names the option first ("--port must be ...")
        if (option != null && cmd.getCommandSpec().defaultValueProvider() instanceof EnvironmentDefaults environment
                && environment.defaultValue(option) != null // the command reads that variable, and it is set
                && java.util.Arrays.stream(args).noneMatch(a -> java.util.Arrays.stream(option.names())
                        .anyMatch(n -> a.equals(n) || a.startsWith(n + "=")))) {
            err.println("The value came from the environment variable " + EnvironmentDefaults.variable(option.longestName()) + ".");
        }
        err.println("See '" + cmd.getCommandSpec().qualifiedName() + " --help' for its options.");
        return cmd.getCommandSpec().exitCodeOnInvalidInput();
    }

    /** The option of {@code cmd} whose long name begins {@code message} ({@link CommandChecks}' refusals), or null. */
    private static CommandLine.Model.OptionSpec refusedOption(CommandLine cmd, String message) {
        if (message == null || !message.startsWith("--")) {
            return null;
        }
        int end = message.indexOf(' ');
        return cmd.getCommandSpec().findOption(end < 0 ? message : message.substring(0, end));
    }
}
