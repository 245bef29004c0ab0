"""The coordinators: consumer groups and their offsets (group); transactions later."""
