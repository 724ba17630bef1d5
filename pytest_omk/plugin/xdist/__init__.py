"""What the plugin does under pytest-xdist: prefetching on workers, the summed status line."""
