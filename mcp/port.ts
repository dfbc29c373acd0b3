/** The MCP server's default Streamable HTTP port (loopback), in a module of its own so the CLI
 * can name it without loading the MCP SDK. */
export const DEFAULT_HTTP_PORT = 17889;
