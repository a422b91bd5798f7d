#include <TestSerial_Category.hpp>
#include <TestForward.hpp>
