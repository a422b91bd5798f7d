#include <TestSerial_Category.hpp>
#include <TestBackward.hpp>
