/* The plugin libconnect_plugin_host.so loads by bare name. */
int plugin_value(void) { return 4242; }
