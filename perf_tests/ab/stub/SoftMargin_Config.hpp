// softmargin_ab: the library's configuration header without its instantiations (each side compiles its own).
#ifndef SOFTMARGIN_CONFIG_HPP
#define SOFTMARGIN_CONFIG_HPP
#define SOFTMARGIN_VERSION "ab"
#endif
