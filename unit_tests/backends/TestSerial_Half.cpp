#include <TestSerial_Category.hpp>
#include <TestHalf.hpp>
