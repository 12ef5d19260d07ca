package dev.ensemble.sessions.agent;

import java.util.Locale;

/**
 * The context window (tokens) of a model named by an agent that does not write the window into its transcript
 * (Gemini CLI, Qwen Code, OpenCode, Cursor): the model family's documented window, or null when the model is not
 * one we know (the fill is then unknown, never 0).
 */
final class ModelWindows {
    /** Gemini 2.x and 3.x models, as Gemini CLI's own token limits say (1,048,576). */
    static final long GEMINI = 1_048_576L;
    /** Gemini 1.5 Pro. */
    static final long GEMINI_15_PRO = 2_097_152L;

    private ModelWindows() {
    }

    /** The window of {@code model}, or null when unknown. */
    static Long of(String model) {
        if (model == null || model.isBlank()) {
            return null;
        }
        String m = model.toLowerCase(Locale.ROOT);
        if (m.contains("claude")) {
            return ClaudeParser.window(model);
        }
        if (m.contains("gemini-1.5-pro")) {
            return GEMINI_15_PRO;
        }
        if (m.contains("gemini")) {
            return GEMINI;
        }
        return null;
    }
}
