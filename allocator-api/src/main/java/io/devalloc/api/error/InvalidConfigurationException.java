package io.devalloc.api.error;

/** A configuration string, key or value was refused; names which key, which value, and what is allowed. */
public final class InvalidConfigurationException extends DevallocException {

    private static final long serialVersionUID = 1L;

    private final String key;
    private final String value;

    /**
     * @param key     the offending key, or null when the text as a whole is malformed
     * @param value   the offending value, or null
     * @param message the full explanation, including what is allowed
     */
    public InvalidConfigurationException(String key, String value, String message) {
        super(message);
        this.key = key;
        this.value = value;
    }

    /** The offending key, or null when the text could not be split into keys. */
    public String key() {
        return key;
    }

    /** The offending value, or null. */
    public String value() {
        return value;
    }
}
