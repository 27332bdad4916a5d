/** The runtime's version; with a hash of the twins it serves, it names the code a world runs. */
export const KIT_VERSION = '0.1.0';
