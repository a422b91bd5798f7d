#include <TestSerial_Category.hpp>
#include <TestRobustness.hpp>
